// A few DOM helpers: the app is small enough not to need a framework.

type Child = Node | string | number | null | undefined | false;
export type Children = (Child | Child[])[];

export function h(tag: string, attrs: Record<string, unknown> = {}, ...children: (Child | Child[])[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v as EventListener);
    else if (k === "class") e.className = String(v);
    else if (k === "style" && typeof v === "object") Object.assign(e.style, v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

/** Enum value name without its prefix, in words: "RANK_ACE" -> "ace". */
export function words(name: unknown, prefix = ""): string {
  let s = String(name ?? "");
  if (prefix && s.startsWith(prefix)) s = s.slice(prefix.length);
  else s = s.replace(/^[A-Z0-9]+_/, "");
  return s.toLowerCase().replace(/_/g, " ");
}
