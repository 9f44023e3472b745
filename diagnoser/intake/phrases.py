"""The classifier's phrases: what people write when something crashed, broke, got slow
or regressed, when they ask for something, ask a question, praise or complain — in
English plus es, de, fr, it, pt, ru, ja and zh — and the negators that cancel a failure
phrase ("never crashed").

Plain data: `diagnoser.intake.cues` compiles and matches them, `diagnoser.intake.classify`
turns what matched into a verdict. A new language or phrase goes here, and its test in
tests/diagnoser/intake/test_classify.py.
"""

from __future__ import annotations

# A phrase is a literal (matched as whole words in alphabetic scripts, anywhere in CJK);
# `re:` phrases are regular expressions whose first literal run is looked for first.
CRASH = (
    "crash", "crashes", "crashed", "crashing", "crashs", "crashes", "keeps crashing",
    "force close", "force closes", "force-close", "force closed", "keeps closing",
    "closes itself", "closes by itself", "kicks me out", "shuts down", "traceback",
    "segfault", "segmentation fault", "panicked", "fatal error", "fatal exception",
    "uncaught", "core dumped", "kernel dies", "sigsegv",
    "se cierra", "se cae", "se crashea", "stürzt", "abgestürzt", "absturz", "stürzt ab",
    "plante", "planté", "plantage", "crashe", "crasha", "si chiude", "si blocca e si chiude",
    "fecha sozinho", "fica fechando", "fechando sozinho", "вылетает", "вылетело",
    "вылетало", "вылетел", "падает", "крашится", "クラッシュ", "落ちる", "落ちた",
    "落ちます", "強制終了", "崩溃", "闪退",
)  # fmt: skip
BUG = (
    "bug", "bugs", "broken", "is broken", "doesn't work", "does not work", "don't work",
    "didn't work", "not working", "isn't working", "stopped working", "won't work",
    "fails", "failed", "failing", "error", "errors", "wrong", "incorrect", "incorrectly",
    "lost my", "lost all", "disappeared", "disappears", "gone", "deleted", "wiped",
    "deprecated", "please fix", "fix this", "fix it", "freezes", "frozen", "hangs",
    "not responding", "does nothing", "do nothing", "nothing happens", "blank",
    "white screen", "black screen", "never arrive", "never arrives", "never comes",
    "never go off", "doesn't go off", "don't go off", "logs me out", "logging me out",
    "logged out", "charged twice", "charged me twice", "twice", "sideways",
    "without sound", "no sound", "greyed out", "grayed out", "stopped updating",
    "keeps saying", "keeps telling", "spinning", "doesn't find", "returns nothing",
    "shows nothing", "problem", "problems", "issue", "issues", "glitch", "glitchy",
    "ignored", "ignores", "overlaps", "mangled", "truncated", "stops working",
    "stop working",
    "re:\\b(?:can't|cannot|can not|couldn't|unable to|won't|wont|doesn't|does not|didn't)"
    "(?: even)? (?:log ?in|login|sign ?in|sign up|open|load|start|launch|save|sync|connect|"
    "access|pay|play|download|upload|send|receive|see|get|install|update|register|"
    "verify|use|add|edit|delete|let|show|work|respond|refresh|display)\\b",
    "no funciona", "no me deja", "no carga", "no se guardan", "no se guarda", "error al",
    "funktioniert nicht", "geht nicht", "fehler", "fehlermeldung", "kommen nicht",
    "ne marche pas", "ne fonctionne pas", "impossible de", "n'arrive jamais",
    "non funziona", "non riesco", "non si apre", "errore", "schermata nera",
    "não funciona", "não consigo", "não abre", "dá erro", "erro", "не работает",
    "не приходят", "не приходит", "не могу", "ошибка", "не открывается", "動かない",
    "できません", "できない", "来ない", "エラー", "不具合", "不能用", "无法", "不了",
    "错误", "打不开", "登录不了",
)  # fmt: skip
PERFORMANCE = (
    "slow", "slowly", "slower", "so slow", "laggy", "lag", "lags", "lagging", "takes forever",
    "takes ages", "battery drain", "eats battery", "eats my battery", "kills my battery",
    "battery hog", "drains", "drain", "too much data", "too much memory", "too much storage",
    "too much battery", "memory leak", "high cpu", "cpu usage",
    "loading forever", "sluggish", "quadratic", "crawling", "memory grows",
    "re:takes (?:like |about |over |more than )?\\d+ ?(?:s|sec|secs|seconds|minutes?)\\b",
    "re:\\d+x slower", "re:freezes for \\d+",
    "lento", "lenta", "lentísima", "consume mucha batería", "langsam", "akku", "lent",
    "lentissima", "ci mette", "travando", "demora", "медленно", "тормозит", "долго",
    "遅い", "重い", "卡顿", "很慢", "太卡", "慢",
)  # fmt: skip
REGRESSION = (
    "no longer", "not anymore", "anymore", "any more", "used to", "since the update",
    "since the last update", "after the update", "after the latest update",
    "after updating", "since updating", "after upgrading", "since upgrading",
    "since the upgrade", "after the upgrade", "regression", "was great until",
    "re:\\bsince (?:v|version |release )?\\d+(?:\\.\\d+)+",
    "re:\\b(?:upgrading|upgraded|updating|updated) to (?:v|version )?\\d",
    "re:\\bstarted (?:generating|giving|throwing|raising|showing|printing|failing|"
    "crashing|returning|to fail|to crash|to return|to show)\\b",
    "ya no", "desde la actualización", "desde la última actualización", "nicht mehr",
    "seit dem update", "seit dem letzten update", "re:\\bseit (?:version )?\\d",
    "depuis la mise à jour", "ne fonctionne plus", "ne marche plus", "ne respecte plus",
    "re:\\bdepuis la \\d", "non funziona più", "non stampa più", "più nulla",
    "dopo l'aggiornamento", "depois da atualização", "não funciona mais",
    "после обновления", "перестал", "перестала", "перестало", "перестали",
    "アップデート後", "更新后", "不再", "升级到",
)  # fmt: skip
REQUEST = (
    "would be nice", "would be great", "would be perfect", "would be even better",
    "would be better", "would be useful", "would be cool", "would help",
    "it would be nice", "it would be useful", "please add", "pls add", "plz add",
    "add pls", "feature request", "could you add", "can you add", "can you guys add",
    "please consider", "i wish", "only wish", "wish there was", "wish it had",
    "wish list", "i'd love", "i would love", "would love", "would like", "i'd like",
    "i want to be able", "want to be able", "if only", "if it had", "if it has",
    "if there was", "if there were", "if i could", "if you could", "needs a", "needs an",
    "really needs", "need a", "only thing missing", "missing a", "missing an",
    "add support", "support for", "option to", "ability to", "let us", "bring back",
    "please bring", "proposal", "enhancement", "rfe", "dark mode", "dark theme",
    "sería genial", "estaría bien", "me gustaría", "añadan", "por favor añadan",
    "wäre schön", "bitte fügt", "hinzufügen", "einbauen", "ce serait bien",
    "j'aimerais", "ajouter", "sarebbe bello", "vorrei", "seria ótimo", "seria bom",
    "gostaria", "добавьте", "хотелось бы", "欲しい", "ほしい", "追加して", "希望",
    "建议", "增加",
)  # fmt: skip
QUESTION = (
    "how do i", "how can i", "how to", "how do you", "is there a way", "is it possible",
    "can i ", "where is", "where do i", "where can i", "what is", "what's the",
    "does anyone", "does this work", "does it work", "is there a", "difference between",
    "question:", "cómo", "wie kann", "wie ", "come faccio", "como faço",
    "re:\\bcomment (?:faire|fait|puis|peut|peux|pouvez|on|je|j'|est|ça|ca|se|avoir|"
    "changer|activer|désactiver|supprimer|mettre|utiliser|ajouter|trouver|récupérer)\\b",
    "como ", "как ", "どうすれば", "方法", "教えて", "如何", "怎么", "请问",
)  # fmt: skip
"""French "comment" (how) only before a verb or pronoun that asks: alone it is the English
noun ("copies an existing comment")."""
DEVELOPER_FAILURE = (
    "ignored", "ignores", "always", "should", "shouldn't", "expected", "unexpected",
    "still", "silently", "twice", "wrong", "incorrect", "fails", "failed", "broken",
    "doesn't", "does not", "isn't", "is not", "not working", "raises", "raise", "raising",
    "error", "exception", "inconsistent", "different", "strange", "surprising",
    "returns", "bug", "crash", "crashes", "regression", "cannot",
)  # fmt: skip
"""Words that show a developer's request or question is about a failure after all."""
PRAISE = (
    "love", "loved", "love it", "great", "good", "nice", "best", "excellent", "perfect",
    "awesome", "amazing", "fantastic", "works great", "works well", "works perfectly",
    "flawlessly", "recommend", "highly recommend", "favorite", "favourite", "reliable",
    "helpful", "useful", "easy to use", "intuitive", "beautiful", "smooth", "thank you",
    "thanks", "worth", "impressed", "it really works", "actually works", "just works",
    "does the job", "does what", "saved my", "five stars", "5 stars", "solid", "fine",
    "me encanta", "excelente", "recomiendo", "perfecto", "genial", "toll", "super",
    "einwandfrei", "zuverlässig", "übersichtlich", "génial", "géniale", "parfait",
    "rien à redire", "ottima", "ottimo", "bellissima", "fantastica", "ótimo", "muito bom",
    "recomendo", "funciona muito bem", "отличное", "отлично", "рекомендую",
    "всё работает", "все работает", "удобно", "最高", "便利", "快適", "使いやすい",
    "好用", "很好", "推荐", "不错",
)  # fmt: skip
NEGATED_FAILURE = (
    "never failed", "never let me down", "never had a problem", "never had an issue",
    "no problems", "no problem", "no issues", "zero issues", "no bugs", "no crashes",
    "no lag", "not a single", "without any problems", "without problems",
    "nunca me ha fallado", "sin ningún problema", "sin problemas", "ohne probleme",
    "noch nie abgestürzt", "nie abgestürzt", "jamais eu", "aucun plantage", "aucun bug",
    "mai un problema", "nessun problema", "nunca travou", "nunca deu problema",
    "sem problemas", "ни разу не", "никогда не подводило", "без проблем",
    "一度も落ち", "落ちない", "落ちません", "不具合もなく", "不具合なし", "問題なく",
    "从来没有闪退", "没有闪退", "从不崩溃", "没有出现过问题", "没有问题", "不卡",
)  # fmt: skip
COMPLAINT = (
    "worst", "terrible", "useless", "garbage", "trash", "rubbish", "waste", "rip off",
    "rip-off", "ripoff", "don't bother", "don't download", "dont download", "horrible",
    "awful", "overpriced", "too expensive", "too many ads", "scam", "meh",
    "pésima", "malísima", "müll", "schrott", "nul", "ужас", "垃圾", "差评",
)  # fmt: skip
NEGATORS = frozenset(
    (
        "never", "no", "not", "without", "zero", "hasn't", "haven't", "hasnt", "havent",
        "didn't", "nor", "fixed", "solved", "resolved", "nunca", "sin", "ningún", "ninguna",
        "nie", "kein", "keine", "keinen", "ohne", "jamais", "aucun", "aucune", "sans", "mai",
        "nessun", "senza", "nenhum", "nenhuma", "sem", "никогда", "ни", "без", "не",
    )
)  # fmt: skip
