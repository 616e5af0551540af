"""What the test suite shares (no tests here; no test file is ever imported for a helper,
tests/test_layout.py checks it):

* ``waiting``: ``wait_until`` (the one) and ``wait_until_async``;
* ``clocks``: ``FakeClock``, for timing asserted on fake seconds;
* ``children``: the launcher of the product's commands as child processes (``Child``,
  ``studio``, ``manage``) and of Django alone, to read its settings;
* ``live``: a live ``manage.py studio`` for the fuzz gates;
* ``builders``: operations stopped at a chosen step (``operation_stopped_at`` and its
  named shapes), parked operations;
* ``runs``: the loop run in the test's thread (``Harness``, ``run_pending``,
  ``decide_when_asked``);
* ``fixtures``: the web apps' folders' ``media`` and ``episode`` fixtures;
* ``model_server``: a loopback OpenAI-compatible server and the chunks it streams;
* ``image_servers``: loopback servers speaking OpenAI's Images API and AUTOMATIC1111's web
  API, with their fixtures (``openai_images``, ``a1111``);
* ``passes``: which pass of `./dev test-all` this process is (``this_pass``);
* ``sinks``, ``stories``, ``trees``: a recording event sink, the article's prompts, big
  session trees;
* ``factories``, ``strategies``: journal entries built by hand and by Hypothesis;
* ``scripted``: a provider that replays a scripted model, turn by turn;
* ``clusters``: a local cluster (web and runner processes on PostgreSQL and Redis);
* ``browser``: the browser tests' studio, logins and page helpers;
* ``append_worker``: a child process that writes to the journals, for the concurrency and
  kill tests.

What more than one folder of tests/ uses lives here; tests/test_layout.py checks it.
"""
