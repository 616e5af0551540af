"""Fixtures for the render service's and the image backends' tests: the media folder
(tests/support/fixtures.py) and the loopback image servers (tests/support/image_servers.py)."""

from tests.support.fixtures import media  # noqa: F401 - fixtures
from tests.support.image_servers import a1111, openai_images  # noqa: F401 - fixtures
