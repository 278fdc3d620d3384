"""Components shared by papers (data from wheels, ...), each with its own tests in tests/test_common.py."""
