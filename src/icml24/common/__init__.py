"""Components shared by three or more papers (none yet), each with its own tests."""
