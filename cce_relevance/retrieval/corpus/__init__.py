"""The corpus: which files are read (walk, .gitignore, sensitive paths) and secrets redacted."""
