import os
import signal

os.kill(os.getppid(), signal.SIGKILL)
