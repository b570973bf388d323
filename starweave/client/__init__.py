"""The device client: executes an agent server's commands on this machine over AIP."""

from starweave.client.connection import DeviceConnection
from starweave.client.device_client import DeviceClient
from starweave.client.device_info import DeviceInfoProvider, DeviceSystemInfo, SystemProbe
from starweave.client.runner import ClientOptions, build_device_client, run_device_client
from starweave.client.websocket import DeviceWebSocketClient

__all__ = [
    "ClientOptions",
    "DeviceClient",
    "DeviceConnection",
    "DeviceInfoProvider",
    "DeviceSystemInfo",
    "DeviceWebSocketClient",
    "SystemProbe",
    "build_device_client",
    "run_device_client",
]
