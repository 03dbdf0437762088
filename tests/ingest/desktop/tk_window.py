"""A small X application for the computer-use producers to act on: one window at the screen's top-left corner
with an entry (where typed text lands) and a button; every button press on the window and every key that
reaches the entry are written to the log file given, one JSON line each (root-window pixel of a click, the
entry's text after a key), so a test can tell where the agent's clicks and keys really landed.

    python3 tk_window.py <log file>
"""

import json
import sys
import tkinter


def main() -> None:
    log = open(sys.argv[1], "a", buffering=1)
    root = tkinter.Tk()
    root.title("trajforge form")
    root.geometry("600x300+0+0")
    entry = tkinter.Entry(root, width=40, font=("TkFixedFont", 16))
    entry.place(x=40, y=40, width=400, height=40)
    button = tkinter.Button(root, text="Save", command=lambda: log.write(json.dumps(
        {"event": "save", "text": entry.get()}) + "\n"))
    button.place(x=40, y=120, width=120, height=50)
    root.bind_all("<ButtonPress>", lambda e: log.write(json.dumps(
        {"event": "press", "button": e.num, "x": e.x_root, "y": e.y_root}) + "\n"))
    entry.bind("<KeyRelease>", lambda e: log.write(json.dumps({"event": "key", "text": entry.get()}) + "\n"))
    root.after(0, lambda: log.write(json.dumps({"event": "ready"}) + "\n"))
    root.mainloop()


if __name__ == "__main__":
    main()
