"""The Action's inputs, read and checked once: one field per input, paths kept inside the workspace."""
