// The text of a page whose contrast against what is behind it is under a threshold (WCAG 2 ratio):
// every element with text of its own, its colour and each ancestor's background and opacity composited.
(threshold) => {
  const canvas = document.createElement("canvas").getContext("2d");
  function rgba(value) {
    canvas.fillStyle = "#000";
    canvas.fillStyle = value;
    const text = canvas.fillStyle;
    if (text.startsWith("#")) {
      return [1, 3, 5].map((i) => parseInt(text.slice(i, i + 2), 16)).concat([1]);
    }
    const parts = text.match(/[\d.]+/g).map(Number);
    return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
  }
  function over(top, bottom) {
    const alpha = top[3] + bottom[3] * (1 - top[3]);
    if (alpha === 0) {
      return [0, 0, 0, 0];
    }
    const mix = (i) => (top[i] * top[3] + bottom[i] * bottom[3] * (1 - top[3])) / alpha;
    return [mix(0), mix(1), mix(2), alpha];
  }
  function luminance(c) {
    const channel = (v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2]);
  }
  // Each element's own background and opacity, read once: every text inside it goes through them.
  const layers = new Map();
  function layer(node) {
    let found = layers.get(node);
    if (!found) {
      const style = getComputedStyle(node);
      found = [rgba(style.backgroundColor), Number(style.opacity)];
      layers.set(node, found);
    }
    return found;
  }
  // What a colour painted inside `element` looks like on screen, through every ancestor's background and opacity.
  function screen(element, colour) {
    let x = colour;
    for (let node = element; node && node.nodeType === 1; node = node.parentElement) {
      const [background, opacity] = layer(node);
      x = over(x, background);
      x = [x[0], x[1], x[2], x[3] * opacity];
    }
    return over(x, [255, 255, 255, 1]);
  }
  const failures = [];
  let checked = 0;
  const seen = new Set();
  for (const element of document.querySelectorAll("body *")) {
    const own = Array.prototype.some.call(element.childNodes, (n) => n.nodeType === 3 && n.nodeValue.trim());
    const drawn = element.matches("button.copy, button.fold-less");
    if ((!own && !drawn) || ["SCRIPT", "STYLE", "TEMPLATE", "NOSCRIPT", "TITLE", "OPTION"].includes(element.tagName)) {
      continue;
    }
    if (!element.checkVisibility({ checkOpacity: false, visibilityProperty: true, contentVisibilityAuto: false })) {
      continue;
    }
    if (!element.getClientRects().length) {
      continue;
    }
    const style = getComputedStyle(element);
    const text = screen(element, rgba(style.color));
    const back = screen(element, [0, 0, 0, 0]);
    const a = luminance(text);
    const b = luminance(back);
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    checked += 1;
    if (ratio < threshold) {
      const words = (element.textContent || "").trim().slice(0, 40);
      const key = element.tagName + "." + element.className + " " + style.color;
      if (!seen.has(key)) {
        seen.add(key);
        failures.push(`${ratio.toFixed(2)} ${element.tagName.toLowerCase()}.${String(element.className).replace(/ /g, ".")} "${words}" ${style.color} on ${back.map(Math.round).slice(0, 3)}`);
      }
    }
  }
  return { checked, failures };
}
