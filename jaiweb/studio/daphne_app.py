"""daphne as an installed app (its ``runserver``), without its Twisted at ``django.setup()``.

daphne's own AppConfig module imports ``daphne.server`` (Twisted, its asyncio reactor,
autobahn) so that the reactor is in before anything else imports one: a large share of
every process's ``django.setup()``, runners and ``manage.py`` commands included, which
never serve a socket. Nothing here imports Twisted before daphne does: ``manage.py
studio``, ``python -m daphne`` and daphne's ``runserver`` import ``daphne.server`` first
thing, and that installs the reactor then.
"""

from django.apps import AppConfig


class DaphneConfig(AppConfig):
    name = "daphne"
    label = "daphne"
    verbose_name = "Daphne"
