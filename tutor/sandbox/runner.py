"""Public entry of the sandbox. CONTRACT (to be implemented by the sandbox work):

class DeviceError(ValueError):
    '''Unknown or unavailable device; message names the devices that exist.'''
    available: list[str]

class Runner(Protocol):
    def run(self, code: str, *, device: str = "cpu",
            probes: Sequence[str | Probe] = (), limits: Limits | None = None) -> RunResult: ...
    def devices(self) -> list[str]: ...

class Sandbox(Runner):
    def __init__(self) -> None: ...
    def start(self) -> None:  # non-blocking warm-up
    def run(...) -> RunResult  # blocks; thread-safe (several runs may be in flight: --jobs)
    def devices(self) -> list[str]
    def resolve_device(self, device: str) -> str   # 'auto' -> best; raises DeviceError
    def close(self) -> None
    def __enter__/__exit__

def default_sandbox() -> Sandbox: process-wide shared instance, closed at exit.

cancel: Sandbox.run accepts ``cancel: threading.Event | None``; when set, the run is killed
and the result's outcome is 'timeout' with error.type 'Cancelled'.
"""
