"""Code shared by papers (docs/architecture.md, "Shared code", says which paper uses which module). Each module
has its own tests in tests/test_common.py."""
