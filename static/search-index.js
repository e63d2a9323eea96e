/* Site search, the index: loads its data scripts on demand (works from file://), splits text as
   sitegen/site/search/index.py does, ranks entries by BM25 and reads their snippets; search.js shows them. */
window.sitegen = window.sitegen || {};
(function () {
  "use strict";

  var form = document.getElementById("search-form");
  if (!form) {
    return;
  }
  var base = form.getAttribute("data-index") || "search/";

  // Token lengths, CJK ranges and weights come from static/search-spec.json (assets/search-spec.js),
  // the one specification sitegen/site/search/postings.py and the SQLite index follow too.
  var SPEC = window.sitegen.searchSpec;
  var RUN = /[\p{L}\p{N}]+/gu;
  var MIN_TOKEN = SPEC.token_min;
  var MAX_TOKEN = SPEC.token_max;
  // Chinese, Japanese and Korean: cut into overlapping character pairs (a lone character stays whole);
  // the index also holds each character alone, so a one-character word is found.
  var CJK_CHARACTERS = SPEC.cjk_ranges
    .map(function (range) {
      return "\\u{" + range[0].toString(16) + "}-\\u{" + range[1].toString(16) + "}";
    })
    .join("");
  var CJK = new RegExp("[" + CJK_CHARACTERS + "]", "u");
  var CJK_SPLIT = new RegExp("([" + CJK_CHARACTERS + "]+)", "u");
  var TRAILING_WORD = /[\p{L}\p{N}]$/u;
  var WEIGHT_SCALE = SPEC.weight_scale;
  // An entry's weight is one of these digits (1..31), as sitegen/site/search/store.py writes them.
  var WEIGHT_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef";
  // A session whose title matches but no entry does is listed itself, like a short user message.
  var TITLE_WEIGHT = 3;
  // Entries of a session whose title names the query rank a little higher.
  var TITLE_BOOST = 0.25;
  var SAME_SESSION_DECAY = 0.8;
  // Completions of the word being typed that are looked at (the most frequent first).
  var MAX_EXPANSIONS = 100;
  // Results are keyed session * ENTRY_SPAN + entry number: no session has this many entries.
  var ENTRY_SPAN = 4194304;
  var SNIPPET_BEFORE = 60;
  var SNIPPET_LENGTH = 240;
  var KIND_NAMES = {
    title: "session",
    user: "user",
    assistant: "assistant",
    tool: "tool output",
    shell: "shell",
    summary: "summary",
    custom: "custom message"
  };

  // ---- Loading data scripts: each calls window.sitegen.search.add(id, data) ----

  var files = window.sitegen.data.loader();

  window.sitegen.search = {
    add: files.add,
    // Exposed so the tests can check they split text exactly as sitegen/site/search/index.py does.
    tokens: tokens,
    indexTerms: indexTerms,
    bucket: bucket
  };

  function load(path, id) {
    return files.load(base + path, id);
  }

  var indexPromise = null;

  function loadIndex() {
    if (!indexPromise) {
      indexPromise = load("index.js", "index").then(prepareIndex);
    }
    return indexPromise;
  }

  function prepareIndex(data) {
    var total = 0;
    var sessions = data.sessions.map(function (row) {
      var entries = 0;
      row[3].forEach(function (chunk) {
        entries += chunk[0];
      });
      total += entries + 1;
      return {
        title: row[0],
        project: row[1],
        page: row[2],
        chunks: row[3],
        entries: entries,
        context: row[4] || "",
        time: row[5] || 0,
        // Parts of one page (the prompts' chunks) share a title that names no part: not searched.
        titleTerms: row[6] ? [] : indexTerms(row[0])
      };
    });
    var segments = data.segments.map(function (row) {
      // starts[i]: how many of the segment's entries come before its i-th session's
      var starts = [];
      var before = 0;
      row[0].forEach(function (number) {
        starts.push(before);
        before += sessions[number].entries;
      });
      return { sessions: row[0], buckets: row[1], shards: row[2], weights: row[3], starts: starts };
    });
    return { sessions: sessions, segments: segments, total: total };
  }

  // ---- Tokens and shards ----

  // The terms of one run of letters and digits, with their code unit offsets in it; with `singles`,
  // each character of a CJK run also alone, as the indexer does (after the pair starting there).
  function runTerms(run, offset, out, singles) {
    if (!CJK.test(run)) {
      var length = Array.from(run).length;
      if (length >= MIN_TOKEN && length <= MAX_TOKEN) {
        out.push({ text: run, start: offset, end: offset + run.length });
      }
      return;
    }
    var at = offset;
    run.split(CJK_SPLIT).forEach(function (piece, number) {
      var chars = Array.from(piece);
      if (number % 2 === 0) {
        if (chars.length >= MIN_TOKEN && chars.length <= MAX_TOKEN) {
          out.push({ text: piece, start: at, end: at + piece.length });
        }
      } else if (chars.length === 1) {
        out.push({ text: piece, start: at, end: at + piece.length });
      } else {
        var start = at;
        for (var i = 0; i < chars.length; i++) {
          if (i + 1 < chars.length) {
            var pair = chars[i] + chars[i + 1];
            out.push({ text: pair, start: start, end: start + pair.length });
          }
          if (singles) {
            out.push({ text: chars[i], start: start, end: start + chars[i].length });
          }
          start += chars[i].length;
        }
      }
      at += piece.length;
    });
  }

  // Lowercased as the index folds text (sitegen/site/search/postings.py lower): the specification's folds after.
  var FOLDS = SPEC.folds;
  var FOLDED = new RegExp("[" + Object.keys(FOLDS).join("") + "]", "gu");

  function fold(text) {
    return text.toLowerCase().replace(FOLDED, function (character) {
      return FOLDS[character];
    });
  }

  // Terms of a text with their places; `lower` says whether to lowercase first (as the indexer does).
  function terms(text, lower, singles) {
    var source = lower ? fold(String(text)) : String(text);
    var out = [];
    var found;
    RUN.lastIndex = 0;
    while ((found = RUN.exec(source)) !== null) {
      runTerms(lower ? found[0] : fold(found[0]), found.index, out, singles);
    }
    return out;
  }

  // How a query is split (sitegen/site/search/index.py tokenize).
  function tokens(text) {
    return terms(text, true, false).map(function (term) {
      return term.text;
    });
  }

  // What an entry or a title is indexed by (sitegen/site/search/index.py _indexed_terms).
  function indexTerms(text) {
    return terms(text, true, true).map(function (term) {
      return term.text;
    });
  }

  function bucket(term, buckets) {
    var first = term.codePointAt(0);
    var second = term.length > (first > 0xffff ? 2 : 1) ? term.codePointAt(first > 0xffff ? 2 : 1) : 0;
    return (first * 31 + second) % buckets;
  }

  function parseQuery(query) {
    var words = tokens(query);
    var prefix = null;
    // The word being typed is a prefix; CJK terms are whole (one character, or a pair of the two typed last).
    if (words.length && TRAILING_WORD.test(query) && !CJK.test(words[words.length - 1])) {
      prefix = words.pop();
    }
    var terms = [];
    words.forEach(function (word) {
      if (terms.indexOf(word) < 0 && word !== prefix) {
        terms.push(word);
      }
    });
    return { terms: terms, prefix: prefix };
  }

  function shardsFor(index, word) {
    return Promise.all(
      index.segments.map(function (segment) {
        var name = segment.shards[bucket(word, segment.buckets)];
        return name ? load("t/" + name + ".js", "t:" + name) : Promise.resolve({});
      })
    );
  }

  function has(object, key) {
    return Object.prototype.hasOwnProperty.call(object, key);
  }

  // A term's entries in one segment: their numbers in the segment ("3,17,40"; from 1, one session's
  // entries after another's), each weighed by its digit in the segment's weights.
  function decode(code, segment, into) {
    var numbers = code.split(",");
    var starts = segment.starts;
    for (var i = 0; i < numbers.length; i++) {
      var position = +numbers[i];
      // The last session starting before this entry (sessions without entries start where the next does).
      var low = 0;
      var high = starts.length - 1;
      while (low < high) {
        var middle = (low + high + 1) >> 1;
        if (starts[middle] < position) {
          low = middle;
        } else {
          high = middle - 1;
        }
      }
      var weight = WEIGHT_DIGITS.indexOf(segment.weights.charAt(position - 1));
      into.push(segment.sessions[low], position - starts[low], weight / WEIGHT_SCALE);
    }
    return numbers.length;
  }

  function idf(index, df) {
    return Math.log(1 + (index.total - df + 0.5) / (df + 0.5));
  }

  // entry key -> score for one query word (the best completion's, for the word being typed)
  function wordScores(index, shards, word, isPrefix) {
    var byTerm = new Map();
    function add(term, code, segment) {
      var found = byTerm.get(term) || { size: 0, parts: [] };
      found.size += code.length;
      found.parts.push({ code: code, segment: segment });
      byTerm.set(term, found);
    }
    index.segments.forEach(function (segment, i) {
      var shard = shards[i];
      if (!isPrefix) {
        if (has(shard, word)) {
          add(word, shard[word], segment);
        }
        return;
      }
      Object.keys(shard).forEach(function (term) {
        if (term.lastIndexOf(word, 0) === 0) {
          add(term, shard[term], segment);
        }
      });
    });
    // The longest postings belong to the most frequent completions.
    var terms = Array.from(byTerm.keys()).sort(function (a, b) {
      return byTerm.get(b).size - byTerm.get(a).size || (a < b ? -1 : 1);
    });
    var scores = new Map();
    terms.slice(0, MAX_EXPANSIONS).forEach(function (term) {
      var postings = [];
      var df = 0;
      byTerm.get(term).parts.forEach(function (part) {
        df += decode(part.code, part.segment, postings);
      });
      var weight = idf(index, df);
      for (var p = 0; p < postings.length; p += 3) {
        var key = postings[p] * ENTRY_SPAN + postings[p + 1];
        var score = weight * postings[p + 2];
        if (!(scores.get(key) >= score)) {
          scores.set(key, score);
        }
      }
    });
    return scores;
  }

  function titleMatches(session, words) {
    var own = session.titleTerms;
    var matched = 0;
    words.forEach(function (word) {
      var hit = word.isPrefix
        ? own.some(function (term) {
            return term.lastIndexOf(word.text, 0) === 0;
          })
        : own.indexOf(word.text) >= 0;
      if (hit) {
        matched++;
      }
    });
    return matched;
  }

  function byScore(a, b) {
    return b.score - a.score || a.session - b.session || a.entry - b.entry;
  }

  function run(index, parsed) {
    var words = parsed.terms.map(function (term) {
      return { text: term, isPrefix: false };
    });
    if (parsed.prefix) {
      words.push({ text: parsed.prefix, isPrefix: true });
    }
    return Promise.all(
      words.map(function (word) {
        return shardsFor(index, word.text);
      })
    ).then(function (shardLists) {
      var perWord = words.map(function (word, i) {
        var scores = wordScores(index, shardLists[i], word.text, word.isPrefix);
        word.idf = idf(index, scores.size);
        return scores;
      });
      var titleHits = index.sessions.map(function (session) {
        return titleMatches(session, words);
      });
      var order = perWord.map(function (_, i) {
        return i;
      });
      order.sort(function (a, b) {
        return perWord[a].size - perWord[b].size;
      });
      var results = [];
      perWord[order[0]].forEach(function (score, key) {
        var total = score;
        for (var i = 1; i < order.length; i++) {
          var other = perWord[order[i]].get(key);
          if (other === undefined) {
            return;
          }
          total += other;
        }
        var session = Math.floor(key / ENTRY_SPAN);
        var boost = 1 + (TITLE_BOOST * titleHits[session]) / words.length;
        results.push({ session: session, entry: key % ENTRY_SPAN, score: total * boost });
      });
      // A session named by the query whose entries do not match is still a result: its page.
      var withEntries = new Set(
        results.map(function (result) {
          return result.session;
        })
      );
      titleHits.forEach(function (hits, number) {
        if (!withEntries.has(number) && hits === words.length) {
          var score = 0;
          words.forEach(function (word) {
            score += word.idf * TITLE_WEIGHT;
          });
          results.push({ session: number, entry: 0, score: score });
        }
      });
      results.sort(byScore);
      // Each further result from the same session counts a little less, so one long session does
      // not fill the first page.
      var seen = new Map();
      results.forEach(function (result) {
        var earlier = seen.get(result.session) || 0;
        seen.set(result.session, earlier + 1);
        result.score *= Math.pow(SAME_SESSION_DECAY, earlier);
      });
      results.sort(byScore);
      return { results: results, count: results.length, words: words };
    });
  }

  // ---- Snippets: entry ids and kinds, and the deflated entry text, are in chunk files ----

  var chunkCache = Object.create(null);

  function inflate(base64) {
    var binary = window.atob(base64);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) {
      bytes[i] = binary.charCodeAt(i);
    }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).text().then(JSON.parse);
  }

  // {rows: [[id, kind, label], ...], texts: [...] or null where the browser cannot inflate}
  function chunk(name) {
    if (!chunkCache[name]) {
      chunkCache[name] = load("d/" + name + ".js", "d:" + name).then(function (data) {
        var texts = typeof DecompressionStream === "function" ? inflate(data.text) : Promise.reject();
        return texts.then(
          function (list) {
            return { rows: data.rows, texts: list };
          },
          function () {
            return { rows: data.rows, texts: null };
          }
        );
      });
    }
    return chunkCache[name];
  }

  // {id, kind, label, text} of entry number `entry` (1-based) of a session; text may be null
  function entryRow(session, entry) {
    var offset = entry - 1;
    for (var i = 0; i < session.chunks.length; i++) {
      var size = session.chunks[i][0];
      if (offset < size) {
        return chunk(session.chunks[i][1]).then(function (data) {
          var row = data.rows[offset];
          return { id: row[0], kind: row[1], label: row[2], text: data.texts ? data.texts[offset] : null };
        });
      }
      offset -= size;
    }
    return Promise.resolve(null);
  }

  function matcher(words) {
    return function (token) {
      var lower = fold(token);
      return words.some(function (word) {
        return word.isPrefix ? lower.lastIndexOf(word.text, 0) === 0 : lower === word.text;
      });
    };
  }

  function findMatches(text, words) {
    var isMatch = matcher(words);
    var matches = [];
    // Places in the text as written: each run is lowercased on its own (lengths may differ otherwise).
    terms(text, false, true).forEach(function (term) {
      if (isMatch(term.text)) {
        matches.push({ start: term.start, end: term.end, word: term.text });
      }
    });
    return matches;
  }

  // Appends text[start, end) to parent as text nodes, with the matches inside it wrapped in <mark>.
  function appendMarked(parent, text, matches, start, end) {
    var cursor = start;
    matches.forEach(function (match) {
      if (match.start < cursor || match.end > end) {
        return;
      }
      parent.appendChild(document.createTextNode(text.slice(cursor, match.start)));
      var mark = document.createElement("mark");
      mark.textContent = text.slice(match.start, match.end);
      parent.appendChild(mark);
      cursor = match.end;
    });
    parent.appendChild(document.createTextNode(text.slice(cursor, end)));
  }

  // The stretch of text with the most distinct query words, matches marked.
  function snippet(text, words) {
    var matches = findMatches(text, words);
    var start = 0;
    var best = -1;
    matches.forEach(function (match) {
      var seen = {};
      var distinct = 0;
      var limit = match.start + SNIPPET_LENGTH - SNIPPET_BEFORE;
      matches.forEach(function (other) {
        if (other.start >= match.start && other.end <= limit && !seen[other.word]) {
          seen[other.word] = true;
          distinct++;
        }
      });
      if (distinct > best) {
        best = distinct;
        start = match.start;
      }
    });
    start = Math.max(0, start - SNIPPET_BEFORE);
    if (start > 0) {
      // Start at a word, unless the nearest space is too far.
      var space = text.indexOf(" ", start);
      start = space >= 0 && space < start + 20 ? space + 1 : start;
    }
    var end = Math.min(text.length, start + SNIPPET_LENGTH);
    var paragraph = document.createElement("p");
    paragraph.className = "result-snippet";
    if (start > 0) {
      paragraph.appendChild(document.createTextNode("…"));
    }
    appendMarked(paragraph, text, matches, start, end);
    if (end < text.length) {
      paragraph.appendChild(document.createTextNode("…"));
    }
    return paragraph;
  }

  window.sitegen.searchIndex = {
    load: loadIndex,
    parseQuery: parseQuery,
    run: run,
    entryRow: entryRow,
    findMatches: findMatches,
    appendMarked: appendMarked,
    snippet: snippet,
    kindNames: KIND_NAMES
  };
})();
