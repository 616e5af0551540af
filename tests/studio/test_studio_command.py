"""`manage.py studio`: the embedded studio (daphne and the runner in one process)."""

import socket

import httpx
import pytest

from tests.support.children import LISTENING, Child, ChildExited


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_it_serves_pages_over_http(tmp_path):
    port = free_port()
    db = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    child = Child(db, "studio", "--port", str(port), env={"DEBUG": "1"})
    try:
        url = child.listening_url(timeout=60)
        assert url == f"http://127.0.0.1:{port}/"

        with httpx.Client(base_url=url, timeout=10) as http:
            home = http.get("/")
            assert home.status_code == 200
            assert "Sign up" in home.text

            health = http.get("/healthz")
            assert health.status_code == 200
            assert health.json()["ok"] is True

            css = http.get("/static/admin/css/base.css")
            assert css.status_code == 200

        # It migrated the (temporary) database first.
        assert (tmp_path / "db.sqlite3").exists()
    finally:
        code = child.terminate(timeout=10)
    assert code == 0, child.stderr_tail()


def test_it_fails_when_the_port_is_taken(tmp_path):
    db = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        child = Child(db, "studio", "--no-migrate", "--port", str(port), env={"DEBUG": "1"})
        try:
            with pytest.raises(ChildExited):  # it ends without ever listening
                child.wait_for(LISTENING, timeout=60)
            assert child.wait_exit(timeout=30) != 0
        finally:
            child.stop()
    assert any(f"could not listen on http://127.0.0.1:{port}/" in line for line in child.err)


def test_it_serves_with_debug_off_unless_asked(tmp_path):
    """Issue 29: no DEBUG in the environment, and the studio answers as in production (its
    own 404 page, never Django's debug page), still serving its static files and icon, on
    the secret key the checkout keeps."""
    port = free_port()
    db = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    child = Child(db, "studio", "--port", str(port))  # DEBUG unset: the child gets none
    try:
        url = child.listening_url(timeout=60)
        with httpx.Client(base_url=url, timeout=10) as http:
            missing = http.get("/s/no-such-link/")
            assert missing.status_code == 404
            assert 'data-status="404"' in missing.text
            assert "DEBUG = True" not in missing.text and "URLconf" not in missing.text
            assert http.get("/static/studio/studio.css").status_code == 200
            assert http.get("/static/vendor/open-props-1.7.23.min.css").status_code == 200
            icon = http.get("/favicon.ico")
            assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon"
            assert 'data-mode="debug">off<' in http.get("/about/").text
    finally:
        code = child.terminate(timeout=10)
    assert code == 0, child.stderr_tail()


def test_one_flag_brings_the_development_settings_back(tmp_path):
    port = free_port()
    db = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    child = Child(db, "studio", "--port", str(port), "--debug")
    try:
        url = child.listening_url(timeout=60)
        with httpx.Client(base_url=url, timeout=10) as http:
            missing = http.get("/no/such/page/")
            assert missing.status_code == 404
            assert "URLconf" in missing.text  # Django's debug page, as asked
            assert 'data-mode="debug">' in http.get("/about/").text
            assert "development settings" in http.get("/about/").text
    finally:
        code = child.terminate(timeout=10)
    assert code == 0, child.stderr_tail()
