// Pan and zoom for a board larger than its box (Qwirkle's open board): fitted to its content by
// default; zoomed by buttons, the keyboard (+, -, 0 to fit; arrows pan the focused box), a
// pinch or ctrl+wheel; panned by scrolling, a touch or a mouse drag. The content is sized in
// em, so a zoom is its font size. The zoom of a board (by its name) outlives its redraws: a
// drawing builds a new box every time.

import { h } from "./dom";

const MIN = 0.25, MAX = 3, STEP = 1.25;
// Fitting never enlarges the content beyond this.
const FIT_MAX = 1.2;

type Zoom = { scale: number | "fit"; left: number; top: number };
const zooms = new Map<string, Zoom>();
const observers = new Map<string, ResizeObserver>();

/** `content` in a scrolling box with its zoom controls; `name` keeps the zoom across redraws. */
export function zoomable(name: string, content: HTMLElement, label: string): HTMLElement {
  const z = zooms.get(name) ?? { scale: "fit", left: 0.5, top: 0.5 };
  zooms.set(name, z);
  const box = h("div", { class: "board-scroll zoom-box", tabindex: 0, role: "group", "aria-label": `${label}: + and - zoom, 0 fits, arrows move` }, content);
  const level = h("span", { class: "zoom-level", "aria-live": "polite" });
  let fitScale = 1;
  const scale = () => (z.scale === "fit" ? fitScale : z.scale);
  const apply = () => {
    content.style.fontSize = "1em";
    const w = content.scrollWidth, hgt = content.scrollHeight;
    const availW = box.clientWidth, availH = parseFloat(getComputedStyle(box).maxHeight) || box.clientHeight;
    if (w && hgt && availW) fitScale = Math.max(MIN, Math.min(FIT_MAX, (availW - 2) / w, (availH - 2) / hgt));
    content.style.fontSize = `${scale()}em`;
    level.textContent = z.scale === "fit" ? "fitted" : `${Math.round(scale() * 100)}%`;
    box.scrollLeft = z.left * (box.scrollWidth - box.clientWidth);
    box.scrollTop = z.top * (box.scrollHeight - box.clientHeight);
  };
  const zoomTo = (s: number | "fit") => {
    z.scale = s === "fit" ? "fit" : Math.max(MIN, Math.min(MAX, s));
    apply();
  };
  box.addEventListener("scroll", () => {
    const w = box.scrollWidth - box.clientWidth, hh = box.scrollHeight - box.clientHeight;
    z.left = w > 0 ? box.scrollLeft / w : 0.5;
    z.top = hh > 0 ? box.scrollTop / hh : 0.5;
  });
  box.addEventListener("keydown", (e) => {
    if (e.target !== box) return;
    if (e.key === "+" || e.key === "=") zoomTo(scale() * STEP);
    else if (e.key === "-") zoomTo(scale() / STEP);
    else if (e.key === "0") zoomTo("fit");
    else return;
    e.preventDefault();
  });
  box.addEventListener("wheel", (e) => {
    if (!e.ctrlKey) return;
    e.preventDefault();
    zoomTo(scale() * (e.deltaY < 0 ? STEP : 1 / STEP));
  }, { passive: false });
  // A pinch: two pointers on the box, the zoom follows their distance.
  const pointers = new Map<number, { x: number; y: number }>();
  let pinch: { d: number; s: number } | undefined;
  const distance = () => { const [a, b] = [...pointers.values()]; return Math.hypot(a.x - b.x, a.y - b.y); };
  // A mouse drag pans (a touch pans by itself); a drag is not a click on what it started on.
  let drag: { x: number; y: number; left: number; top: number; moved: boolean } | undefined;
  box.addEventListener("pointerdown", (e) => {
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pointers.size === 2) pinch = { d: distance(), s: scale() };
    if (e.pointerType === "mouse" && e.button === 0) drag = { x: e.clientX, y: e.clientY, left: box.scrollLeft, top: box.scrollTop, moved: false };
  });
  box.addEventListener("pointermove", (e) => {
    if (!pointers.has(e.pointerId)) return;
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pinch && pointers.size === 2 && pinch.d > 0) zoomTo(pinch.s * distance() / pinch.d);
    if (drag && (drag.moved || Math.hypot(e.clientX - drag.x, e.clientY - drag.y) > 6)) {
      drag.moved = true;
      box.scrollLeft = drag.left - (e.clientX - drag.x);
      box.scrollTop = drag.top - (e.clientY - drag.y);
    }
  });
  box.addEventListener("click", (e) => { if (drag?.moved) { e.stopPropagation(); e.preventDefault(); } drag = undefined; }, true);
  const up = (e: PointerEvent) => { pointers.delete(e.pointerId); if (pointers.size < 2) pinch = undefined; if (drag && !drag.moved) drag = undefined; };
  box.addEventListener("pointerup", up);
  box.addEventListener("pointercancel", up);
  // Sized once the box is on the page, and again when its width changes.
  observers.get(name)?.disconnect();
  const seen = { w: -1 };
  const observer = new ResizeObserver(() => { if (box.isConnected && box.clientWidth !== seen.w) { seen.w = box.clientWidth; apply(); } });
  observer.observe(box);
  observers.set(name, observer);
  const button = (text: string, title: string, act: () => void, cls: string) =>
    h("button", { type: "button", class: cls, title, "aria-label": title, onclick: act }, text);
  return h("div", { class: "zoomable", "data-zoom": name },
    h("div", { class: "zoom-controls" },
      button("−", "zoom out", () => zoomTo(scale() / STEP), "zoom-out"),
      button("fit", "fit the board", () => zoomTo("fit"), "zoom-fit"),
      button("+", "zoom in", () => zoomTo(scale() * STEP), "zoom-in"),
      level),
    box);
}
