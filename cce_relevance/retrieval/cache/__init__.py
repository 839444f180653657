"""The index cache: files' and corpora's records kept between runs. Speed only: never changes a result."""
