"""The checkout: git commands on it and the Action's output directory in it."""
