"""End to end in headless Chromium (#44 item 4): each change of head or view is one
history entry; Back undoes one change at a time and stays in the app, Forward redoes it
(``ui/chart.js`` pushes the bound widgets' URL changes)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.helpers.browser import open_dropdown, wait_idle, wait_plot


def test_back_and_forward_undo_and_redo_one_change_each(page, server_url):
    page.goto(f"{server_url}/visualizer")
    wait_idle(page)
    wait_plot(page, "attn_big")
    head = page.get_by_role("combobox", name="Head")
    open_dropdown(page, page.locator(".st-key-head"))
    page.get_by_role("option", name="2", exact=True).click()
    wait_idle(page)
    assert page.url.endswith("/visualizer?head=2"), page.url
    page.locator(".st-key-view").get_by_text("mask", exact=True).click()
    wait_idle(page)
    wait_plot(page, "mask_panels")
    assert page.url.endswith("/visualizer?head=2&view=mask"), page.url
    page.go_back()  # the view change undone, the head kept
    wait_idle(page)
    assert page.url.endswith("/visualizer?head=2"), page.url
    wait_plot(page, "attn_big")
    expect(head).to_have_value("2")
    page.go_back()  # the head change undone: still in the app, on its first state
    wait_idle(page)
    assert page.url.endswith("/visualizer"), page.url
    expect(head).to_have_value("0")
    page.go_forward()
    wait_idle(page)
    assert page.url.endswith("/visualizer?head=2"), page.url
    expect(head).to_have_value("2")
    assert not page.locator('[data-testid="stException"]').count()
