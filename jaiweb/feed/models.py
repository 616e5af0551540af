"""The feed's posts: what the publish webhook received."""

from django.db import models


class FeedPost(models.Model):
    """A panel posted to the episode feed by a signed webhook call."""

    id = models.CharField(primary_key=True, max_length=40)
    image_id = models.CharField(max_length=40)
    caption = models.CharField(max_length=500)
    session_id = models.CharField(max_length=40, blank=True)
    idempotency_key = models.CharField(max_length=128, blank=True)  # evidence for the inbox
    received_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["-received_at"], name="feed_recent"),
            # recovery looks a call's post up by its key
            models.Index(fields=["idempotency_key"], name="feed_post_key"),
        ]

    def __str__(self) -> str:
        return f"{self.id}: {self.caption[:40]}"
