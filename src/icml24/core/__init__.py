"""The frame every paper plugs into: registry, configs, stats, claims, run store, executors, report.

Nothing here knows about any particular paper. Modules are kept light at import time so that
`icml24 list` never pays for numpy or torch.
"""
