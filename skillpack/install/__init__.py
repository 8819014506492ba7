"""Installing approved skills into agents' folders, and verifying those folders.

`skillpack.install.pipeline.install` writes (`agents`: where each agent reads skills,
`remote`: sites and OCI references fetched first, `place`: one skill written or removed
atomically, `state`: what install recorded in a folder); `skillpack.install.folders`
verifies any agent's folder against a lock, whoever filled it.

This stage sits above `publish` and `approve` (import-linter's layers in pyproject.toml): it
reads locks and signatures (approve), pulls OCI artifacts and reads the well-known index
(publish), and neither of them needs it; only the command line sits above it.
"""
