// The Icon component's icons, drawn for the console (24x24, outlined, currentColor).
// Each icon is a list of shapes: "C:cx,cy,r" a circle, "R:x,y,w,h,rx" a rectangle, else SVG
// path data; a leading "!" fills the shape. Browser only (a2ui-view.js draws them).

const HEART = "M12 20s-7.5-4.6-7.5-10.2A4.3 4.3 0 0 1 12 7.3a4.3 4.3 0 0 1 7.5 2.5C19.5 15.4 12 20 12 20z";
const STAR = "M12 3.5l2.6 5.5 6 .7-4.5 4.1 1.2 5.9L12 16.8l-5.3 2.9 1.2-5.9-4.5-4.1 6-.7z";
const BELL = ["M6 16.5V11a6 6 0 0 1 12 0v5.5l1.5 2h-15z", "M10 20.5a2 2 0 0 0 4 0"];
const EYE = ["M2.5 12S6 5.5 12 5.5 21.5 12 21.5 12 18 18.5 12 18.5 2.5 12 2.5 12z", "C:12,12,3"];
const SPEAKER = "!M4 9.5h3.5L12 5.5v13l-4.5-4H4z";
const CALENDAR = ["R:3,5,18,16,2", "M3 10h18", "M8 3v4", "M16 3v4"];
const LOCK = ["R:5,10.5,14,10,2"];

/** name -> shapes */
export const ICONS = {
  accountCircle: ["C:12,12,9.5", "C:12,10,3.3", "M5.8 18.4c1.5-2.2 3.6-3.3 6.2-3.3s4.7 1.1 6.2 3.3"],
  add: ["M12 5v14", "M5 12h14"],
  arrowBack: ["M19 12H5", "M11 6l-6 6 6 6"],
  arrowForward: ["M5 12h14", "M13 6l6 6-6 6"],
  attachFile: ["M16.5 7l-7.3 7.3a2 2 0 0 0 2.8 2.8l7.3-7.3a4 4 0 0 0-5.7-5.7L6.3 11.4a6 6 0 0 0 8.5 8.5l5.2-5.2"],
  calendarToday: CALENDAR,
  call: ["M5 4h3.5l1.7 4.3-2.2 1.4a11 11 0 0 0 6.3 6.3l1.4-2.2 4.3 1.7V19a1.5 1.5 0 0 1-1.6 1.5A16 16 0 0 1 3.5 5.6 1.5 1.5 0 0 1 5 4z"],
  camera: ["M4 8h3.5L9 5.5h6L16.5 8H20a1 1 0 0 1 1 1v9a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1V9a1 1 0 0 1 1-1z", "C:12,13,3.5"],
  check: ["M5 12.5l4.5 4.5L19 7.5"],
  close: ["M6 6l12 12", "M18 6L6 18"],
  delete: ["M4 7h16", "M9.5 7V4.5h5V7", "M6.5 7l1 13h9l1-13", "M10 11v5", "M14 11v5"],
  download: ["M12 4v11", "M7 10.5l5 5 5-5", "M5 20h14"],
  edit: ["M4 20h4L19 9l-4-4L4 16z", "M13.5 6.5l4 4"],
  event: [...CALENDAR, "!R:13,13,4,4,0.5"],
  error: ["C:12,12,9.5", "M12 7.5v5.5", "M12 16.5v.01"],
  fastForward: ["!M3.5 6l8 6-8 6z", "!M12 6l8 6-8 6z"],
  favorite: ["!" + HEART],
  favoriteOff: [HEART],
  folder: ["M3 6.5A1.5 1.5 0 0 1 4.5 5H9l2 2.5h8.5A1.5 1.5 0 0 1 21 9v9.5a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 18.5z"],
  help: ["C:12,12,9.5", "M9.5 9.5a2.5 2.5 0 1 1 3.5 2.3c-.7.3-1 .9-1 1.7v.5", "M12 17v.01"],
  home: ["M4 11l8-7 8 7", "M6 9.5V20h4.5v-5.5h3V20H18V9.5"],
  info: ["C:12,12,9.5", "M12 11v6", "M12 7.5v.01"],
  locationOn: ["M12 21s-6.5-6-6.5-11a6.5 6.5 0 0 1 13 0c0 5-6.5 11-6.5 11z", "C:12,10,2.3"],
  lock: [...LOCK, "M8 10.5v-3a4 4 0 0 1 8 0v3"],
  lockOpen: [...LOCK, "M8 10.5v-3a4 4 0 0 1 7.7-1.5"],
  mail: ["R:3,5.5,18,13,2", "M3.5 6.5l8.5 6.5 8.5-6.5"],
  menu: ["M4 7h16", "M4 12h16", "M4 17h16"],
  moreVert: ["!C:12,5.5,1.5", "!C:12,12,1.5", "!C:12,18.5,1.5"],
  moreHoriz: ["!C:5.5,12,1.5", "!C:12,12,1.5", "!C:18.5,12,1.5"],
  notificationsOff: [...BELL, "M4 4l16 16"],
  notifications: BELL,
  pause: ["!R:6.5,5,3.5,14,1", "!R:14,5,3.5,14,1"],
  payment: ["R:3,5.5,18,13,2", "M3 10h18", "M7 15h3"],
  person: ["C:12,8,4", "M4.5 20.5c.8-3.8 3.7-6 7.5-6s6.7 2.2 7.5 6"],
  phone: ["R:7,2.5,10,19,2", "M11 18.5h2"],
  photo: ["R:3,4.5,18,15,2", "C:9,10,1.8", "M4 18l5-5 3.5 3.5L15 14l5 5"],
  play: ["!M8 5.5v13l10.5-6.5z"],
  print: ["M7 9V3.5h10V9", "R:3.5,9,17,8,1.5", "R:7,14,10,6.5,0.5"],
  refresh: ["M19.5 12a7.5 7.5 0 1 1-2.2-5.3", "M19.5 4.5V9H15"],
  rewind: ["!M20.5 6l-8 6 8 6z", "!M12 6l-8 6 8 6z"],
  search: ["C:10.5,10.5,6", "M15 15l5 5"],
  send: ["M4 12l16-8-5.5 16-3-6.5z", "M11.5 13.5L20 4"],
  settings: ["C:12,12,3", "C:12,12,6.5", "M12 2.5v3", "M12 18.5v3", "M2.5 12h3", "M18.5 12h3", "M5.3 5.3l2.1 2.1", "M16.6 16.6l2.1 2.1", "M5.3 18.7l2.1-2.1", "M16.6 7.4l2.1-2.1"],
  share: ["C:6,12,2.5", "C:17.5,6,2.5", "C:17.5,18,2.5", "M8.2 10.8l7-3.6", "M8.2 13.2l7 3.6"],
  shoppingCart: ["M3 4h2.5l2.2 11h10.8l2-8H6.3", "C:9,19.5,1.5", "C:17,19.5,1.5"],
  skipNext: ["!M5.5 6v12l9-6z", "!R:16,6,2.5,12,0.5"],
  skipPrevious: ["!M18.5 6v12l-9-6z", "!R:5.5,6,2.5,12,0.5"],
  star: ["!" + STAR],
  starHalf: [STAR, "!M12 3.5v13.3l-5.3 2.9 1.2-5.9-4.5-4.1 6-.7z"],
  starOff: [STAR],
  stop: ["!R:6,6,12,12,1.5"],
  upload: ["M12 20V9", "M7 13.5l5-5 5 5", "M5 4h14"],
  visibility: EYE,
  visibilityOff: [...EYE, "M4 4l16 16"],
  volumeDown: [SPEAKER, "M15.5 9.5a3.5 3.5 0 0 1 0 5"],
  volumeMute: [SPEAKER],
  volumeOff: [SPEAKER, "M15.5 9.5l5 5", "M20.5 9.5l-5 5"],
  volumeUp: [SPEAKER, "M15.5 9.5a3.5 3.5 0 0 1 0 5", "M17.5 6.5a7.5 7.5 0 0 1 0 11"],
  warning: ["M12 3.5l9.5 16.5h-19z", "M12 10v4.5", "M12 17.5v.01"],
};

const NS = "http://www.w3.org/2000/svg";

/** An <svg> of shapes (as ICONS holds them), or of one agent-sent path (`{d}`). */
export function svgIcon(shapes) {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  for (const raw of shapes) {
    const filled = raw.startsWith("!");
    const s = filled ? raw.slice(1) : raw;
    let el;
    if (s.startsWith("C:")) {
      const [cx, cy, r] = s.slice(2).split(",");
      el = document.createElementNS(NS, "circle");
      el.setAttribute("cx", cx);
      el.setAttribute("cy", cy);
      el.setAttribute("r", r);
    } else if (s.startsWith("R:")) {
      const [x, y, w, hgt, rx] = s.slice(2).split(",");
      el = document.createElementNS(NS, "rect");
      el.setAttribute("x", x);
      el.setAttribute("y", y);
      el.setAttribute("width", w);
      el.setAttribute("height", hgt);
      el.setAttribute("rx", rx ?? "0");
    } else {
      el = document.createElementNS(NS, "path");
      el.setAttribute("d", s);
    }
    if (filled) el.setAttribute("class", "fill");
    svg.append(el);
  }
  return svg;
}
