"""One sub-package per paper; see ``papers/_template`` for the contract each one fills."""
