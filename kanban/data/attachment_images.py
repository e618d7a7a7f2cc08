"""What an attached image is, read by Pillow: its real format and size, and the cover
thumbnail a card shows. Only PNG, JPEG, WebP and GIF count as images (never SVG, which is a
page that can run script); anything else, whatever its uploader called it, is a file.

Pillow decodes nothing until asked, so the pixel count is checked from the header first:
a small file that would decode to gigabytes (a decompression bomb) is refused before it
is decoded, and ``Image.MAX_IMAGE_PIXELS`` guards the decoder itself as well (no warning
filter is changed for it: filters are the whole process's, shared by every thread).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import IO, Final

from PIL import Image, UnidentifiedImageError

from storage.errors import ErrorCode, KanbanError

#: Pillow's format name -> the type an image is served as.
IMAGE_TYPES: Final = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "WEBP": "image/webp",
    "GIF": "image/gif",
}
#: The longest side of a cover thumbnail, in pixels.
THUMBNAIL_SIDE: Final = 320
#: The most pixels an attached image may have (a 64-megapixel photo passes).
MAX_IMAGE_PIXELS: Final = 64_000_000
# Pillow's own guard, for any decoding in this process: it warns past this and refuses
# (DecompressionBombError) past twice this, wherever a header check was missed.
Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS


@dataclass(frozen=True, slots=True)
class Picture:
    content_type: str
    width: int
    height: int
    thumbnail: bytes  # PNG


def picture_of(stream: IO[bytes]) -> Picture | None:
    """The image ``stream`` holds (None: it is not one of the four formats). Raises
    ``too_large`` for an image of more than ``MAX_IMAGE_PIXELS``, decoding nothing."""
    stream.seek(0)
    try:
        image = Image.open(stream, formats=list(IMAGE_TYPES))
        if image.width * image.height > MAX_IMAGE_PIXELS:
            raise _too_many_pixels(image.width, image.height)
        width, height = image.width, image.height
        content_type = IMAGE_TYPES[str(image.format)]
        image.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE))
        thumbnail = io.BytesIO()
        _displayable(image).save(thumbnail, format="PNG", optimize=True)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise _too_many_pixels(None, None) from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError):
        return None  # not an image Pillow can read: served as a file
    finally:
        stream.seek(0)
    return Picture(content_type, width, height, thumbnail.getvalue())


def _displayable(image: Image.Image) -> Image.Image:
    """PNG takes these modes as they are; others (CMYK JPEGs, palettes...) go to RGBA."""
    return image if image.mode in {"RGB", "RGBA", "L", "LA"} else image.convert("RGBA")


def _too_many_pixels(width: int | None, height: int | None) -> KanbanError:
    size = "" if width is None else f" ({width} x {height})"
    return KanbanError(
        ErrorCode.TOO_LARGE,
        f"this image has too many pixels{size}: at most {MAX_IMAGE_PIXELS} are accepted",
        limit=MAX_IMAGE_PIXELS,
    )
