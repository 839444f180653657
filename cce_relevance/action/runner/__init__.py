"""The GitHub runner's side: its REST API, workflow commands, the job's deadline, the comment upsert."""
