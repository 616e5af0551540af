import pytest

pytestmark = pytest.mark.django_db


def test_it_works(client):
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"ok": True, "database": "ok"}
    assert "no-cache" in r["Cache-Control"]


def test_it_handles_head(client):
    assert client.head("/healthz").status_code == 200


def test_it_rejects_post(client):
    assert client.post("/healthz").status_code == 405


def test_it_reports_a_database_failure(client, monkeypatch):
    class BrokenConnection:
        vendor = "broken"

        def cursor(self):
            raise RuntimeError("database is gone")

    monkeypatch.setattr("jaiweb.studio.views.connection", BrokenConnection())
    r = client.get("/healthz")
    assert r.status_code == 503
    assert r.json() == {"ok": False, "database": "error"}
