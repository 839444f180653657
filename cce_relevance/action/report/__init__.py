"""What the Action reports: the outcome (the gate), the comment body, the per-query changes."""
