"""Indexing one file on its own (the record it yields and its bytes), in worker processes when it pays."""
