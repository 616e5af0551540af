"""The web application plus /static/, for web processes with no proxy in front.

`manage.py cluster` serves this module when DEBUG is on (or with --insecure); `studio`
wraps its application the same way, always. Behind a reverse proxy that serves
STATIC_ROOT, web processes run `daphne jaiweb.asgi:application` instead.
"""

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

from jaiweb.asgi import application as web_application

application = ASGIStaticFilesHandler(web_application)
