"""The accounts app: users' sign-up and API tokens."""

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Sign up, log in, log out, change password (Django auth)."""

    name = "jaiweb.accounts"
    label = "accounts"
