import pytest

from schemas.render_a11y import render_a11y

UIA = {"Name": "Settings", "ControlType": "WindowControl",
       "BoundingRectangle": {"left": 0, "top": 0, "right": 800, "bottom": 600}, "Children": [
           {"Name": "", "ControlType": "PaneControl", "BoundingRectangle": {"left": 0, "top": 0, "right": 800, "bottom": 600},
            "Children": [
                {"Name": "Night light", "ControlType": "ButtonControl",
                 "BoundingRectangle": {"left": 10, "top": 20, "right": 110, "bottom": 60}, "Children": []},
                {"Name": "", "ControlType": "EditControl", "Value": "125%",
                 "BoundingRectangle": {"left": 10, "top": 70, "right": 110, "bottom": 90}, "Children": []},
                {"Name": "hidden", "ControlType": "ButtonControl",
                 "BoundingRectangle": {"left": 0, "top": 0, "right": 0, "bottom": 0}, "Children": []}]}]}
AX = {"AXRole": "AXWindow", "AXTitle": "Finder", "AXFrame": {"x": 0, "y": 25, "w": 1024, "h": 615}, "AXChildren": [
    {"AXRole": "AXGroup", "AXChildren": [
        {"AXRole": "AXButton", "AXDescription": "Back", "AXFrame": {"x": 8, "y": 30, "w": 20, "h": 20},
         "AXEnabled": False},
        {"AXRole": "AXTextField", "AXValue": "Downloads", "AXFrame": {"x": 40, "y": 30, "w": 200, "h": 20}}]}]}
ATSPI = """<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state"
    xmlns:cp="https://accessibility.ubuntu.example.org/ns/component">
  <application name="gedit">
    <frame name="Untitled Document 1 - gedit" cp:screencoord="(0, 0)" cp:size="(1920, 1080)">
      <filler><push-button name="Open" st:showing="true" cp:screencoord="(10, 40)" cp:size="(60, 30)"/>
        <push-button name="Gone" st:showing="false" cp:screencoord="(90, 40)" cp:size="(60, 30)"/>
        <text cp:screencoord="(0, 80)" cp:size="(1920, 900)">Hello</text></filler>
    </frame>
  </application>
</desktop-frame>"""


def test_windows_uia_tree():
    assert render_a11y(UIA, "Window: Settings") == "\n".join([
        "Window: Settings",
        '[0] Window "Settings" @[0,0][800,600]',
        '  [2] Button "Night light" @[10,20][110,60]',
        '  [3] Edit value="125%" @[10,70][110,90]',
    ])


def test_macos_ax_tree():
    assert render_a11y(AX) == "\n".join([
        '[0] Window "Finder" @[0,25][1024,640]',
        '  [2] Button desc="Back" {disabled} @[8,30][28,50]',
        '  [3] TextField value="Downloads" @[40,30][240,50]',
    ])


def test_linux_atspi_xml():
    assert render_a11y(ATSPI) == "\n".join([
        '[0] application "gedit"',
        '  [1] frame "Untitled Document 1 - gedit" @[0,0][1920,1080]',
        '    [3] push-button "Open" @[10,40][70,70]',
        '    [5] text value="Hello" @[0,80][1920,980]',
    ])


def test_other_shapes_are_refused():
    with pytest.raises(ValueError):
        render_a11y(42)
