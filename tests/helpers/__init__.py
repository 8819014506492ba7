"""Builders and paths shared by the test suite, one job a module; a test imports what it
needs from here (``from helpers.skills import write_skill``), never from another test module.

* `paths`: the repository, fixtures/, the corpus and the skills in it, benchmarks as modules;
* `skills`: skill folders and trees written at test time;
* `zips`: zip archives built and taken apart (by skillpack's writer, by the stdlib, by hand);
* `cli`: the one in-process runner of ``skillpack ARGS``, and what a command wrote;
* `syscalls`: opens intercepted or denied, and the audit hook source for child interpreters;
* `bundles`: bundles and archives built member by member, for the runtime's tests;
* `approval`: locks, keys and a changed skill, for the lock, signing and review tests;
* `secrets`: fake secrets made by concatenation, and the leaks every scan must find;
* `registry`: a real OCI registry on 127.0.0.1 (docker-registry) and skopeo;
* `hostile`: the tally of hostile inputs and the guards of the hostile suite.

The directory is on ``sys.path`` through ``pythonpath`` in pyproject.toml's
``[tool.pytest.ini_options]``; test modules are imported with ``--import-mode=importlib``,
so two test files of one name in different folders do not clash.
"""
