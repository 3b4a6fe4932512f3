"""A real headless Chromium (Debian's chromium and chromium-driver) driven by Selenium.

Selenium is blocking, so every call runs in a worker thread: the relay under test serves from
the test's own event loop meanwhile. Selenium is pointed at /usr/bin/chromium and its
chromedriver: it never downloads a browser or a driver of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable
from typing import Final, TypeVar

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webelement import WebElement

CHROMIUM: Final = ("/usr/bin/chromium", "/usr/lib/chromium/chromium")
CHROMEDRIVER: Final = ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver")
FLAGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-dev-shm-usage",
)

T = TypeVar("T")


def _found(names: tuple[str, ...], what: str) -> str:
    for name in names:
        if os.access(name, os.X_OK):
            return name
    path = shutil.which(os.path.basename(names[0]))
    if path:
        return path
    pytest.fail(
        f"{what} not found: install Debian's chromium and chromium-driver (scripts/test does)"
    )


class Browser:
    """One Chromium window; each method runs the blocking Selenium call off the event loop."""

    def __init__(self, driver: webdriver.Chrome) -> None:
        self.driver = driver

    async def call(self, action: Callable[[webdriver.Chrome], T]) -> T:
        return await asyncio.to_thread(action, self.driver)

    async def get(self, url: str) -> None:
        await self.call(lambda d: d.get(url))

    async def until(self, check: Callable[[webdriver.Chrome], T | None], within: float = 30.0) -> T:
        """The first truthy result of ``check(driver)``, polled; fails the test after ``within``."""
        last: T | None = None
        try:
            async with asyncio.timeout(within):
                while True:
                    with contextlib.suppress(WebDriverException):
                        last = await self.call(check)
                        if last:
                            return last
                    await asyncio.sleep(0.1)
        except TimeoutError:
            source = await self.call(lambda d: d.page_source[:4000])
            pytest.fail(f"not on the page after {within} s (last: {last!r}):\n{source}")

    async def css(self, selector: str) -> list[WebElement]:
        from selenium.webdriver.common.by import By

        return await self.call(lambda d: d.find_elements(By.CSS_SELECTOR, selector))

    async def text(self, selector: str) -> str:
        """The visible text of the first element matching ``selector`` (``""`` if none)."""
        from selenium.webdriver.common.by import By

        def read(d: webdriver.Chrome) -> str:
            found = d.find_elements(By.CSS_SELECTOR, selector)
            return found[0].text if found else ""

        return await self.call(read)

    async def script(self, code: str, *args: object) -> object:
        return await self.call(lambda d: d.execute_async_script(code, *args))

    async def screenshot(self, path: str) -> None:
        await self.call(lambda d: d.save_screenshot(path))


@contextlib.asynccontextmanager
async def chromium(
    width: int = 1280, height: int = 900, flags: tuple[str, ...] = ()
) -> AsyncIterator[Browser]:
    """A fresh headless Chromium with its own profile directory (and ``flags`` besides)."""
    binary = _found(CHROMIUM, "chromium")
    driver_path = _found(CHROMEDRIVER, "chromedriver")
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = binary
        own = (f"--user-data-dir={profile}", f"--window-size={width},{height}", *flags)
        for flag in (*FLAGS, *own):
            options.add_argument(flag)
        service = Service(executable_path=driver_path)
        driver = await asyncio.to_thread(webdriver.Chrome, options=options, service=service)
        try:
            driver.set_script_timeout(20)
            yield Browser(driver)
        finally:
            await asyncio.to_thread(driver.quit)
