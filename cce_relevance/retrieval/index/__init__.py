"""The index: its model (chunks plus what ranking derives from them) and how a corpus is built into one."""
