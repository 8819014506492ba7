"""`skillpack._threads`: one helper thread running jobs in turn (the second half of
the content scan's split needle search runs there)."""

from __future__ import annotations

import os
import signal

import pytest

from skillpack._threads import Background


def test_a_background_job_returns_or_raises_in_order() -> None:
    helper = Background("skillpack-test")
    done = [helper.run(lambda i=i: i * i) for i in range(50)]
    failed = helper.run(lambda: 1 // 0)
    after = helper.run(lambda: "still running")
    assert [d.result() for d in done] == [i * i for i in range(50)]
    with pytest.raises(ZeroDivisionError):
        failed.result()
    assert after.result() == "still running"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_gets_its_own_helper_thread() -> None:
    helper = Background("skillpack-test-fork")
    assert helper.run(lambda: 1).result() == 1  # the thread runs in this process
    pid = os.fork()
    if pid == 0:  # the child: the parent's thread is not here
        signal.alarm(20)  # a job never run would wait for ever: killed, the test fails
        code = 0 if helper.run(lambda: 2).result() == 2 else 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert helper.run(lambda: 3).result() == 3
