"""Operations: health and metrics endpoints, and the scale-out launcher (`manage.py cluster`)."""
