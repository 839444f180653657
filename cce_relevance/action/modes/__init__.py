"""The Action's modes besides evaluate: publish (post a comment a fork's run prepared)."""
