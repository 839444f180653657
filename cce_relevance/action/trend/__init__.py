"""The trend on the default branch: the history document, its record, the branch store, the view."""
