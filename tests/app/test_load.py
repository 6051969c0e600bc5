"""Twenty people at once on one running app: nobody errors, everybody gets their own picture, and the
server's memory levels off under the caches' byte budgets, however fast this machine runs pages."""

import pytest
from load_scenario import run_load

pytestmark = pytest.mark.slow

# Small budgets (ui/session/cache.py), so that the fixed work below overflows every cache several times over:
# each half of it computes about 40 new results (about 1 MiB each) and their figures.
BUDGETS_MIB = {"ANATOMY_RESULTS_MB": 8, "ANATOMY_FIGURES_MB": 4, "ANATOMY_MODELS_MB": 32}
# A closed tab's session keeps its last page (result and figures) for server.disconnectedSessionTTL, so
# the number of pages kept would depend on how many tabs this machine closes in that time: here a tab's
# session ends when it closes, and what stays is the caches and the twenty open tabs' pages.
SESSIONS_END_AT_ONCE = {"STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "0"}
# What grows besides the caches: the twenty open tabs' pages, the page runs in flight at once, and the
# allocator's slack (more threads' arenas on a machine with more cores). Measured on 2 cores: growth
# 68-79 MiB in all, of which the second half -3 to +14 MiB.
ALLOWANCE_MIB = 150
PLATEAU_SLACK_MIB = 40  # the second half of the work may add this much at most


def test_twenty_sessions_get_their_own_pages_and_memory_levels_off_under_the_budgets():
    report = run_load(
        n_sessions=20,
        configs_each=4,
        seconds=None,
        env={**{name: str(mib) for name, mib in BUDGETS_MIB.items()}, **SESSIONS_END_AT_ONCE},
    )
    print(report.summary())
    assert not report.errors, report.errors[:3]
    assert not report.mismatches, report.mismatches[:3]
    assert report.requests == 20 * 4 * 2  # every configuration opened, then rerun, once
    assert report.rss_end_mib - report.rss_half_mib <= PLATEAU_SLACK_MIB, report.summary()
    assert report.rss_end_mib - report.rss_start_mib <= sum(BUDGETS_MIB.values()) + ALLOWANCE_MIB, report.summary()
