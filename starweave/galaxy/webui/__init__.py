"""The Galaxy WebUI (spec B §9, E §15): a FastAPI app on a Galaxy session's event bus.

``starweave galaxy --webui`` starts it. The browser page (``static/``) shows the devices, a chat that
submits requests, the live task DAG and an event log; everything it needs comes over ``/ws``.
"""

from starweave.galaxy.webui.app import create_app
from starweave.galaxy.webui.broadcast import Broadcaster
from starweave.galaxy.webui.serializer import serialize_event, serialize_value
from starweave.galaxy.webui.service import WebUIService

__all__ = ["Broadcaster", "WebUIService", "create_app", "serialize_event", "serialize_value"]
