"""Sign up, log out and log in again, in Chromium against a running studio."""

from __future__ import annotations

import pytest

from tests.support.browser import PASSWORD, login, signup, unique

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.one_pass("sqlite"),  # the embedded studio (docs/TESTING.md)
]


def test_sign_up_log_out_and_log_in_again(shared_studio, page):
    base = shared_studio.url
    name = unique("e2e_")
    signup(page, base, name)
    assert page.locator("[data-username]").inner_text() == name

    page.locator('[data-action="logout"]').click()
    page.wait_for_url(f"{base}/accounts/login/")
    assert page.locator("[data-username]").count() == 0

    login(page, base, name, PASSWORD)
    assert page.locator("[data-username]").inner_text() == name


def test_a_wrong_password_is_refused(shared_studio, page):
    base = shared_studio.url
    name = unique("e2e_")
    signup(page, base, name)
    page.locator('[data-action="logout"]').click()
    page.wait_for_url(f"{base}/accounts/login/")

    page.locator('#login-form input[name="username"]').fill(name)
    page.locator('#login-form input[name="password"]').fill("not-the-password")
    page.locator('#login-form button[type="submit"]').click()
    page.wait_for_load_state()
    assert page.url.startswith(f"{base}/accounts/login/")
    assert page.locator("[data-username]").count() == 0
