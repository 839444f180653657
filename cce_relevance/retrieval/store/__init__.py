"""The index store: the reference's JSON index file and the fingerprint of the corpus it was built from."""
