"""`python manage.py seed_demo`: a `demo` user with a fresh password, and the article's session."""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from jaiweb.store.demo import article_session_create

USERNAME = "demo"


class Command(BaseCommand):
    help = "Create (or reuse) the demo user with a new random password and build a demo session."

    def handle(self, *args, **options):
        password = secrets.token_urlsafe(12)
        with transaction.atomic():
            user, created = get_user_model().objects.get_or_create(username=USERNAME)
            user.set_password(password)
            user.save(update_fields=["password"])
            session = article_session_create(owner=user)
            earlier = user.comic_sessions.exclude(pk=session.pk).count()
        self.stdout.write(f"demo user: {USERNAME} / {password}")
        if not created:
            self.stdout.write(
                f"the user existed: its password is now the one above; its {earlier} earlier "
                "session(s) are kept and this is a new one"
            )
        self.stdout.write(f"session {session.id}: /sessions/{session.id}/")
