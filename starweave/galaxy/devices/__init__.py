"""Galaxy's device layer: device configuration, the registry of AgentProfiles and the device manager."""

from starweave.galaxy.devices.config import ConstellationConfig, DeviceConfig, load_devices_config
from starweave.galaxy.devices.manager import ConstellationDeviceManager
from starweave.galaxy.devices.profile import AgentProfile, DeviceStatus
from starweave.galaxy.devices.queue import QueuedTask, TaskQueueManager
from starweave.galaxy.devices.registry import DeviceRegistry

__all__ = [
    "AgentProfile",
    "ConstellationConfig",
    "ConstellationDeviceManager",
    "DeviceConfig",
    "DeviceRegistry",
    "DeviceStatus",
    "QueuedTask",
    "TaskQueueManager",
    "load_devices_config",
]
