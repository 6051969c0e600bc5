"""Twenty people at once on one running app: nobody errors, everybody gets their own picture."""

import pytest

from load_scenario import run_load

pytestmark = pytest.mark.slow


def test_twenty_concurrent_sessions_each_get_exactly_their_single_session_page():
    report = run_load(n_sessions=20, configs_each=2, seconds=20.0)
    print(report.summary())
    assert not report.errors, report.errors[:3]
    assert not report.mismatches, report.mismatches[:3]
    assert report.requests >= 40
    assert report.rss_end_mib - report.rss_start_mib < 300, report.summary()
