"""The hostile suite (issue 5): every refusal skillpack promises, tried on inputs built at
test time through the entry points a user touches (pack, verify, load, bundle, the CLI).

docs/SECURITY.md names each test that holds a promise; benchmarks/hostile_counts.py prints
how many hostile inputs the suite tried, refused and accepted.
"""
