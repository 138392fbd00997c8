"""Closed-class words per language: the grammar a rule scorer may read, not phrases from a corpus.

A standing rule is recognised by its structure (a prohibition, an obligation, a
universal adverb, no pointer into the conversation), and in every language that
structure is carried by a small, closed set of function words: negations, modal
verbs, "always/never", demonstratives, question words, personal pronouns. This
module lists them for English, French, German, Spanish, Italian, Portuguese,
Dutch, Czech and Polish, and picks a message's language by counting its function
words (the classic stop-word method). Nothing here names a project, a command or
a phrase a user of the dev corpora typed.

Matching is on :func:`normalise` text: lower case, accents stripped (many people
type Czech or French without them), apostrophes unified.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from desktop.memory.text.lazy_re import lazy


@dataclass(frozen=True)
class LanguageCues:
    """The function words of one language that carry mood, generality and reference."""

    code: str
    function_words: frozenset[str]
    """Frequent words used only to tell the language apart."""
    prohibition: tuple[str, ...]
    """Sentence openers that forbid ("don't", "never"): the strongest mark of a rule."""
    obligation: tuple[str, ...]
    """Modal words of obligation ("must", "should", "need to", "required")."""
    universal: tuple[str, ...]
    """Words that make a statement general ("always", "never", "every time", "by default")."""
    deixis: tuple[str, ...]
    """Words that point into the conversation ("this", "here", "now", "again", "above")."""
    one_off: tuple[str, ...]
    """Words that bind a request to today ("for now", "first", "later", "we need to": the speaker's own task)."""
    question: tuple[str, ...]
    """Words that open a question ("why", "can you", "is it")."""
    self_voice: tuple[str, ...]
    """Personal pronouns of a speaker talking to the agent (I, we, you, let's)."""
    desire: tuple[str, ...]
    """First-person wishes and opinions ("I want", "I think", "I wonder"): framing, not rules."""
    reason: tuple[str, ...]
    """Connectives that give a reason ("because", "since", "otherwise")."""
    contrast: tuple[str, ...]
    """Words that state the alternative ("instead", "rather than")."""
    please: tuple[str, ...]
    """Politeness markers of a request."""
    narrative: tuple[str, ...]
    """First/second person + past: telling what happened in this session ("I tried", "you wrote")."""
    project_nouns: tuple[str, ...] = ()
    """Nouns that, after a demonstrative, name the project as a whole ("this repo"): not deixis."""
    scopes: tuple[str, ...] = ()
    """How a sentence opens by naming the project as its scope ("in this repo, ..."): general, and not its
    mood ("in this repo, never edit X": the prohibition follows the scope)."""
    change_verbs: tuple[str, ...] = ()
    """Verbs of a change to make now ("add", "fix", "rename"): after a modal, a task, not a rule."""
    proposal: tuple[str, ...] = ()
    """Openers that propose a step of the current work ("let's", "how about")."""
    auxiliaries: tuple[str, ...] = ()
    """Copulas and auxiliaries: before "never"/"always" they describe ("is never called"), not direct."""
    anaphora: tuple[str, ...] = ()
    """Pronouns that point back to something said before ("it", "them", "its"): the sentence needs it."""
    anaphoric_object: str = ""
    """A pattern for an object pronoun a word list cannot tell from a particle: Czech "to" before an
    infinitive ("to prenastavit", reset *it*) points back, "to je" ("that is") does not."""
    stative: tuple[str, ...] = ()
    """Verbs of knowing, having and feeling: "we don't know", "don't worry" state or reassure; they do not forbid."""
    conditional: tuple[str, ...] = ()
    """Openers of a condition ("if", "when"): a modal inside one ("if you must ...") directs nobody."""
    fact_openers: tuple[str, ...] = ()
    """How a statement about the environment opens ("we use", "the repo is", "there is no")."""
    memory_openers: tuple[str, ...] = ()
    """How a sentence asks to be remembered ("remember:", "keep in mind that", "don't forget to"): a reminder,
    weaker than a prohibition ("fyi" and "note:" introduce information, not an instruction)."""
    reminders: tuple[str, ...] = ()
    """A reminder addressed to the agent anywhere in a sentence ("..., but I wanted to remind you to X"): what
    follows is asked to be kept, like a memory opener's."""
    choice_verbs: tuple[str, ...] = ()
    """Imperatives that pick among alternatives ("use", "prefer"): with the alternative named ("use X, not
    Y"), a standing choice."""
    insistence: tuple[str, ...] = ()
    """How a user points back at what they already told the agent ("I said", "as I told you"): said again."""
    replies: tuple[str, ...] = ()
    """The discourse markers that answer the agent ("yes", "no", "ok"): what follows reacts to one proposal."""
    interjections: tuple[str, ...] = ()
    """Discourse markers that open a sentence without being its mood ("oh,", "yeah", "and", "also"): a
    prohibition after one ("oh, please don't ...") is still the sentence's mood. None that folds onto
    another word: Spanish "si" (yes, and if), Italian and Portuguese "e" ("è"/"é", is); a marker that is also
    a negation ("no", "nao", "nie") is passed only before punctuation or another marker."""
    elaboration: tuple[str, ...] = ()
    """Openers that go on with the sentence before ("like", "I mean", "for example"): after a
    question, what follows is that question's, not a rule of its own."""


_EN: Final = LanguageCues(
    "en",
    frozenset(["the", "a", "an", "and", "or", "of", "to", "in", "is", "are", "was", "were", "be", "it", "that", "this",
               "with", "for", "on", "you", "we", "i", "not", "but", "do", "does", "can", "should", "would", "have",
               "has", "there", "what", "when", "if"]),
    elaboration=("like", "i mean", "e.g.", "eg", "for example", "for instance", "as in", "that is"),
    prohibition=("don't", "dont", "do not", "never", "please don't", "please do not", "stop", "avoid",
                 "no more", "you can't", "you cannot", "you must not", "you mustn't", "we don't", "we do not",
                 "we never", "you shouldn't", "you should not", "we shouldn't", "we should not"),
    obligation=("must", "mustn't", "should", "shouldn't", "shall", "need to", "needs to", "have to", "has to",
                "ought to", "required", "requires", "mandatory", "make sure", "ensure", "is not allowed",
                "are not allowed", "not supposed to", "only ever"),
    universal=("always", "never", "every time", "everytime", "each time", "whenever", "every", "all the time",
               "by default", "in general", "at all times", "any time", "from now on", "in future", "going forward",
               "wherever", "in this project", "in this repo", "in this codebase", "here we"),
    deixis=("this", "that", "these", "those", "here", "now", "again", "above", "below", "earlier",
            "previous", "previously", "the last", "the other", "this one", "that one", "like before", "as before"),
    one_off=("for now", "right now", "at the moment", "currently", "today", "tonight", "tomorrow", "yesterday",
             "first", "then", "next", "later", "yet", "anymore", "right away", "for this", "this time",
             "in this pr", "in this branch", "on this branch", "this session", "so far", "instead now",
             "we need to", "i need to", "once"),
    question=("what", "why", "how", "where", "when", "which", "who", "whose", "can you", "could you",
              "would you", "will you", "can we", "could we", "should we", "shall we", "do you", "do we",
              "does it", "did you", "did we", "is it", "is there", "is this", "are there", "are we", "are you",
              "isn't", "aren't", "wasn't", "any idea", "wondering", "i wonder", "is that"),
    self_voice=("i", "i'm", "i'd", "i've", "i'll", "me", "my", "we", "we're", "we've", "we'll", "us", "our",
                "you", "you're", "your", "let's", "lets"),
    desire=("i want", "i'd like", "i would like", "i think", "i feel", "i guess", "i believe", "i wonder",
            "i mean", "i'd prefer", "i prefer", "i hope", "i'm thinking", "i was thinking", "thinking about",
            "i suppose", "i assume", "maybe", "perhaps", "probably", "if i'm not mistaken", "not sure",
            "i'm not sure"),
    reason=("because", "since", "so that", "otherwise", "as it", "as they", "due to", "given that", "that's why",
            "the reason", "or else", "it is a", "it's a", "too slow", "too large", "too big"),
    contrast=("instead", "rather than", "instead of", "not", "but"),
    memory_openers=("remember that", "remember", "keep in mind that", "keep in mind", "bear in mind that",
                    "bear in mind", "for future reference", "don't forget that", "don't forget", "do not forget",
                    "recall that", "just a friendly reminder", "just a reminder", "a friendly reminder",
                    "reminder:", "reminder -", "reminder,", "friendly reminder:", "friendly reminder,",
                    "friendly reminder to"),
    reminders=("i wanted to remind you to", "i wanted to remind you that", "i just wanted to remind you to",
               "i just wanted to remind you that", "let me remind you to", "let me remind you that",
               "i'd like to remind you to", "i'd like to remind you that", "i would like to remind you that",
               "just to remind you", "just reminding you to", "just reminding you that", "please recall that",
               "please remember that", "please remember to", "please keep in mind that"),
    choice_verbs=("use", "prefer", "pick", "choose", "stick to", "stick with", "go with", "call", "name", "put",
                  "keep", "import", "store", "write"),
    insistence=("i said", "i told you", "as i said", "like i said", "i already said", "i already told you",
                "i mentioned", "as i mentioned", "i asked you", "i've said", "i've told you", "i have told you"),
    replies=("yes", "yeah", "yep", "no", "nope", "ok", "okay", "sure", "alright"),
    interjections=("oh", "ah", "ok", "okay", "yeah", "yes", "yep", "no", "nope", "hmm", "hm", "well", "so", "and",
                   "also", "btw", "alright", "sure", "oops", "sorry", "wait", "actually"),
    please=("please", "pls", "kindly"),
    narrative=("should have", "shouldn't have", "must have", "could have", "would have", "never mind", "nevermind",
               "i tried", "i got", "i ran", "i just", "i did", "i had", "i saw", "i noticed", "i made",
               "i added", "i changed", "i was", "you wrote", "you did", "you added", "you changed", "you made",
               "you said", "you put", "you used", "you forgot", "you broke", "you removed", "you created",
               "we had", "we did", "we added", "we changed", "we made", "we used", "we were", "it was",
               "this was", "that was", "there was"),
    project_nouns=("project", "repo", "repository", "codebase", "code base", "team", "company"),
    scopes=("in this project", "in this repo", "in this repository", "in this codebase", "in this code base",
            "in our project", "in our repo", "in our codebase", "for this project", "for this repo",
            "across the codebase", "throughout the codebase"),
    change_verbs=("add", "update", "change", "fix", "rename", "remove", "delete", "implement", "create", "move",
                  "refactor", "include", "write", "rewrite", "revert", "merge", "modify", "replace", "drop",
                  "extract", "split", "introduce", "build", "do", "make", "try", "look", "check", "review",
                  "investigate", "test", "commit", "push", "run", "show", "print", "log", "wire", "handle"),
    proposal=("let's", "lets", "let us", "how about", "what about", "shall we", "ok let's", "okay let's"),
    auxiliaries=("is", "are", "was", "were", "be", "been", "being", "get", "gets", "got", "has", "have", "had", "it's",
                 "isn't", "wasn't", "but"),
    anaphora=("it", "its", "it's", "them", "they", "their", "those ones", "that one", "this one", "anything",
              "something", "let me know", "show me", "tell me"),
    stative=("know", "have", "see", "care", "think", "understand", "remember", "get", "seem", "mind", "like", "worry",
             "need", "really need"),
    fact_openers=("we use", "we are on", "we're on", "we run", "we deploy", "we host", "we have no", "the repo is",
                  "the repository is", "the project uses", "the project is", "this project uses", "the shell is",
                  "my shell is", "the server", "the database", "the db is", "the host", "the port is", "the app runs",
                  "the services run", "services run", "it runs on", "we are using",
                  "we're using", "i use", "i'm on", "i am on", "we deploy to", "production is", "staging is", "ci runs",
                  "the ci"),
    conditional=("if", "when", "unless", "in case", "whenever"),
)

_FR: Final = LanguageCues(
    "fr",
    frozenset(["le", "la", "les", "un", "une", "des", "et", "ou", "de", "du", "est", "sont", "pas", "que", "qui",
               "dans", "pour", "sur", "avec", "ce", "cette", "il", "nous", "vous", "je", "ne", "en", "au", "aux"]),
    elaboration=("genre", "je veux dire", "par exemple", "c'est-a-dire", "du genre", "style"),
    prohibition=("ne jamais", "jamais", "n'utilise pas", "ne pas", "ne fais pas", "ne faites pas", "evite",
                 "evitez", "arrete", "arretez", "il ne faut pas", "on ne", "nous ne", "tu ne", "vous ne"),
    obligation=("il faut", "doit", "doivent", "devez", "dois", "devrait", "devraient", "obligatoire", "necessaire",
                "assure-toi", "assurez-vous", "faut que", "est requis", "sont requis"),
    universal=("toujours", "jamais", "chaque fois", "a chaque", "tout le temps", "par defaut", "en general",
               "desormais", "dorenavant", "a l'avenir", "tous les", "toutes les"),
    deixis=("ce", "cet", "cette", "ces", "ca", "cela", "ici", "maintenant", "encore", "ci-dessus", "ci-dessous",
            "precedent", "juste", "meme", "celui-ci", "celle-ci"),
    one_off=("pour l'instant", "pour le moment", "actuellement", "aujourd'hui", "demain", "hier", "d'abord",
             "ensuite", "puis", "plus tard", "pas encore", "tout de suite", "cette fois"),
    question=("pourquoi", "comment", "quand", "quel", "quelle", "quels", "quelles", "qui", "est-ce", "peux-tu",
              "pouvez-vous", "peut-on", "y a-t-il", "as-tu", "avez-vous"),
    self_voice=("je", "j'", "moi", "mon", "ma", "mes", "nous", "notre", "nos", "tu", "toi", "ton", "ta", "tes",
                "vous", "votre", "vos", "on"),
    desire=("je veux", "je voudrais", "j'aimerais", "je pense", "je crois", "je me demande", "peut-etre",
            "je prefere", "je suppose"),
    reason=("parce que", "car", "puisque", "sinon", "afin que", "pour que", "a cause de", "c'est pourquoi"),
    contrast=("plutot que", "au lieu de", "a la place", "mais"),
    memory_openers=("rappelle-toi que", "rappelle-toi", "retiens que", "retiens", "n'oublie pas que",
                    "n'oublie pas"),
    reminders=("je voulais te rappeler de", "je voulais te rappeler que", "je voulais vous rappeler de",
               "je voulais vous rappeler que", "je te rappelle que", "je vous rappelle que"),
    choice_verbs=("utilise", "utilisez", "prends", "prenez", "prefere", "preferez", "garde", "gardez"),
    insistence=("j'ai dit", "je t'ai dit", "je vous ai dit", "je te l'ai dit", "comme je disais", "comme je l'ai dit"),
    replies=("oui", "non", "ok", "d'accord"),
    interjections=("oh", "ah", "ok", "bon", "alors", "et", "aussi", "oui", "non", "d'accord", "bref"),
    please=("s'il te plait", "s'il vous plait", "stp", "svp", "merci de"),
    narrative=("j'ai essaye", "j'ai eu", "j'ai lance", "tu as", "vous avez", "nous avons eu", "c'etait"),
    project_nouns=("projet", "depot", "code"),
    scopes=("dans ce projet", "dans ce depot", "dans ce code", "dans notre projet", "dans notre depot",
            "pour ce projet"),
    change_verbs=("ajouter", "modifier", "changer", "corriger", "renommer", "supprimer", "implementer", "creer",
                  "deplacer", "mettre a jour", "ecrire", "faire", "verifier", "tester"),
    proposal=("on va", "allons", "et si"),
    auxiliaries=("est", "sont", "etait", "ete", "a", "ont", "avait"),
    anaphora=("le", "la", "les", "lui", "leur", "y", "en"),
    stative=("sais", "savons", "avons", "ai", "vois", "pense"),
    fact_openers=("on utilise", "nous utilisons", "le depot est", "le projet utilise", "le serveur", "la base",
                  "il n'y a pas", "on est sur", "nous sommes sur"),
    conditional=("si", "quand", "lorsque"),
)

_DE: Final = LanguageCues(
    "de",
    frozenset(["der", "die", "das", "und", "oder", "ist", "sind", "nicht", "ein", "eine", "zu", "mit", "fur", "auf",
               "im", "den", "dem", "ich", "wir", "du", "sie", "es", "auch", "aber", "wie", "was", "bitte"]),
    elaboration=("also", "ich meine", "zum beispiel", "z.b.", "sprich", "quasi"),
    prohibition=("nie", "niemals", "nicht", "kein", "keine", "keinen", "vermeide", "vermeiden", "hor auf",
                 "lass das", "bitte nicht", "auf keinen fall", "du darfst nicht", "wir durfen nicht"),
    obligation=("muss", "mussen", "musst", "sollte", "sollten", "sollst", "soll", "notwendig", "erforderlich",
                "pflicht", "stell sicher", "stelle sicher", "achte darauf", "darf nicht", "durfen nicht"),
    universal=("immer", "nie", "niemals", "jedes mal", "jedesmal", "stets", "grundsatzlich", "standardmassig",
               "in zukunft", "ab jetzt", "kunftig", "alle", "jede", "jeder", "jedes"),
    deixis=("dies", "diese", "dieser", "dieses", "das", "hier", "jetzt", "nun", "wieder", "oben", "unten",
            "vorher", "gerade", "eben", "gleiche"),
    one_off=("fur jetzt", "im moment", "momentan", "derzeit", "heute", "morgen", "gestern", "zuerst", "dann",
             "danach", "spater", "noch nicht", "sofort", "diesmal"),
    question=("warum", "wieso", "weshalb", "wie", "wo", "wann", "welche", "welcher", "wer", "kannst du",
              "konnen wir", "konntest du", "ist es", "gibt es", "hast du", "sollen wir"),
    self_voice=("ich", "mich", "mir", "mein", "meine", "wir", "uns", "unser", "unsere", "du", "dich", "dir",
                "dein", "deine", "ihr", "euch", "lass uns"),
    desire=("ich will", "ich mochte", "ich wurde gerne", "ich denke", "ich glaube", "ich frage mich",
            "vielleicht", "wahrscheinlich", "ich finde"),
    reason=("weil", "da", "denn", "damit", "sonst", "andernfalls", "deshalb", "deswegen", "wegen"),
    contrast=("stattdessen", "anstatt", "statt", "sondern", "aber"),
    memory_openers=("merke dir", "denk daran", "denke daran", "vergiss nicht"),
    reminders=("ich wollte dich daran erinnern", "ich wollte euch daran erinnern", "ich mochte dich daran erinnern",
               "ich erinnere dich daran"),
    choice_verbs=("verwende", "verwendet", "benutze", "benutzt", "nimm", "nehmt", "bevorzuge"),
    insistence=("ich sagte", "ich habe gesagt", "ich habe dir gesagt", "hab ich gesagt", "wie gesagt",
                "ich hatte gesagt"),
    replies=("ja", "nein", "ok"),
    interjections=("oh", "ah", "ok", "und", "ja", "nein", "naja", "gut"),
    please=("bitte",),
    narrative=("ich habe", "ich hatte", "du hast", "wir haben", "es war", "das war"),
    project_nouns=("projekt", "repo", "repository", "code"),
    scopes=("in diesem projekt", "in diesem repo", "in diesem repository", "in diesem code", "in unserem projekt",
            "in unserem repo", "im projekt", "im repo", "fur dieses projekt"),
    change_verbs=("hinzufugen", "andern", "aktualisieren", "beheben", "umbenennen", "entfernen", "loschen",
                  "implementieren", "erstellen", "verschieben", "schreiben", "machen", "prufen", "testen"),
    proposal=("lass uns", "lasst uns", "wie ware es"),
    auxiliaries=("ist", "sind", "war", "waren", "wird", "wurde", "hat", "haben"),
    anaphora=("es", "ihn", "ihm", "ihnen", "sie"),
    stative=("weiss", "wissen", "habe", "haben", "sehe", "denke"),
    fact_openers=("wir nutzen", "wir verwenden", "wir sind auf", "das repo ist", "das projekt nutzt", "der server",
                  "die datenbank", "es gibt kein", "es gibt keine"),
    conditional=("wenn", "falls", "sofern"),
)

_ES: Final = LanguageCues(
    "es",
    frozenset(["el", "la", "los", "las", "un", "una", "y", "o", "de", "del", "es", "son", "no", "que", "en", "para",
               "con", "por", "se", "lo", "yo", "nosotros", "tu", "usted", "pero", "como", "esta", "este"]),
    elaboration=("o sea", "es decir", "por ejemplo", "tipo", "quiero decir"),
    prohibition=("no uses", "no hagas", "nunca", "jamas", "no se debe", "evita", "evitar", "deja de", "no hay que"),
    obligation=("debe", "deben", "debes", "deberia", "deberias", "hay que", "tiene que", "tienes que",
                "tenemos que", "necesario", "obligatorio", "asegurate", "requerido", "no se puede"),
    universal=("siempre", "nunca", "jamas", "cada vez", "todas las veces", "por defecto", "en general",
               "de ahora en adelante", "en el futuro", "todos los", "todas las"),
    deixis=("este", "esta", "esto", "estos", "estas", "ese", "esa", "eso", "aqui", "ahora", "otra vez",
            "de nuevo", "arriba", "abajo", "antes", "mismo"),
    one_off=("por ahora", "de momento", "ahora mismo", "actualmente", "hoy", "manana", "ayer", "primero",
             "luego", "despues", "mas tarde", "todavia no", "aun no", "esta vez"),
    question=("por que", "como", "donde", "cuando", "cual", "cuales", "quien", "puedes", "podemos", "podrias",
              "hay", "es", "tienes"),
    self_voice=("yo", "me", "mi", "mis", "nosotros", "nos", "nuestro", "nuestra", "tu", "te", "tus", "usted",
                "ustedes", "vamos"),
    desire=("quiero", "quisiera", "me gustaria", "creo", "pienso", "me pregunto", "quizas", "tal vez",
            "probablemente", "prefiero"),
    reason=("porque", "ya que", "puesto que", "para que", "sino", "de lo contrario", "debido a", "por eso"),
    contrast=("en lugar de", "en vez de", "sino", "pero"),
    insistence=("te dije", "ya te dije", "como dije", "ya dije", "dije que"),
    replies=("no", "vale", "ok"),
    interjections=("oh", "ah", "ok", "vale", "bueno", "pues", "y", "no"),
    please=("por favor", "porfa"),
    narrative=("intente", "ejecute", "escribiste", "hiciste", "agregaste", "cambiaste", "fue", "era"),
    project_nouns=("proyecto", "repositorio", "codigo"),
    scopes=("en este proyecto", "en este repositorio", "en este codigo", "en nuestro proyecto", "para este proyecto"),
    auxiliaries=("es", "son", "esta", "estan", "fue", "ha", "han", "era"),
    fact_openers=("usamos", "estamos en", "el repo es", "el proyecto usa", "el servidor", "la base de datos", "no hay"),
    conditional=("si", "cuando"),
)

_IT: Final = LanguageCues(
    "it",
    frozenset(["il", "lo", "la", "i", "gli", "le", "un", "una", "e", "o", "di", "del", "della", "che", "non", "in",
               "per", "con", "su", "io", "noi", "tu", "voi", "ma", "come", "questo", "questa", "sono"]),
    elaboration=("cioe", "per esempio", "ad esempio", "tipo", "voglio dire"),
    prohibition=("non usare", "non fare", "mai", "evita", "evitare", "smetti di", "non si deve", "non devi"),
    obligation=("deve", "devono", "devi", "dobbiamo", "dovrebbe", "dovresti", "bisogna", "occorre", "necessario",
                "obbligatorio", "assicurati", "richiesto"),
    universal=("sempre", "mai", "ogni volta", "di default", "per impostazione predefinita", "in generale",
               "d'ora in poi", "in futuro", "tutti i", "tutte le"),
    deixis=("questo", "questa", "questi", "queste", "quello", "quella", "qui", "qua", "ora", "adesso",
            "di nuovo", "ancora", "sopra", "sotto", "prima", "stesso"),
    one_off=("per ora", "per adesso", "al momento", "attualmente", "oggi", "domani", "ieri", "prima",
             "poi", "dopo", "piu tardi", "non ancora", "subito", "questa volta"),
    question=("perche", "come", "dove", "quando", "quale", "quali", "chi", "puoi", "possiamo", "potresti",
              "c'e", "e possibile", "hai"),
    self_voice=("io", "mi", "mio", "mia", "noi", "ci", "nostro", "nostra", "tu", "ti", "tuo", "tua", "voi",
                "vostro", "facciamo"),
    desire=("voglio", "vorrei", "penso", "credo", "mi chiedo", "forse", "probabilmente", "preferisco"),
    reason=("perche", "poiche", "siccome", "cosi che", "altrimenti", "a causa di", "per questo"),
    contrast=("invece di", "anziche", "piuttosto che", "invece", "ma"),
    insistence=("ti ho detto", "ho detto", "come ho detto", "te l'ho detto"),
    replies=("no", "ok"),
    interjections=("oh", "ah", "ok", "allora", "beh", "no"),
    please=("per favore", "per piacere", "ti prego"),
    narrative=("ho provato", "ho eseguito", "hai scritto", "hai fatto", "hai aggiunto", "era", "e stato"),
    project_nouns=("progetto", "repository", "codice"),
    scopes=("in questo progetto", "in questo repository", "in questo codice", "nel nostro progetto",
            "per questo progetto"),
    auxiliaries=("e", "sono", "era", "stato", "ha", "hanno"),
    conditional=("se", "quando"),
)

_PT: Final = LanguageCues(
    "pt",
    frozenset(["o", "a", "os", "as", "um", "uma", "e", "ou", "de", "do", "da", "dos", "das", "que", "nao", "em", "para",
               "com", "por", "se", "eu", "nos", "voce", "mas", "como", "isso", "esta", "este", "sao"]),
    elaboration=("ou seja", "por exemplo", "tipo", "quer dizer", "quero dizer"),
    prohibition=("nao use", "nao faca", "nunca", "jamais", "evite", "evitar", "pare de", "nao se deve",
                 "nao pode"),
    obligation=("deve", "devem", "deveria", "devemos", "tem que", "temos que", "precisa", "precisamos",
                "e necessario", "obrigatorio", "certifique-se", "garanta"),
    universal=("sempre", "nunca", "jamais", "toda vez", "cada vez", "por padrao", "em geral",
               "daqui em diante", "no futuro", "todos os", "todas as"),
    deixis=("este", "esta", "isto", "estes", "esse", "essa", "isso", "aqui", "agora", "de novo", "novamente",
            "acima", "abaixo", "antes", "mesmo"),
    one_off=("por enquanto", "por agora", "no momento", "atualmente", "hoje", "amanha", "ontem", "primeiro",
             "depois", "mais tarde", "ainda nao", "agora mesmo", "desta vez"),
    question=("por que", "porque", "como", "onde", "quando", "qual", "quais", "quem", "pode", "podemos",
              "poderia", "ha", "tem"),
    self_voice=("eu", "me", "meu", "minha", "nos", "nosso", "nossa", "voce", "voces", "te", "teu", "tua",
                "vamos"),
    desire=("quero", "gostaria", "acho", "penso", "creio", "me pergunto", "talvez", "provavelmente", "prefiro"),
    reason=("porque", "pois", "ja que", "uma vez que", "para que", "senao", "caso contrario", "devido a",
            "por isso"),
    contrast=("em vez de", "ao inves de", "em lugar de", "mas"),
    insistence=("eu disse", "te disse", "como eu disse", "ja disse", "ja te disse", "eu falei", "ja falei"),
    replies=("sim", "nao", "ok"),
    interjections=("oh", "ah", "ok", "entao", "bem", "sim", "nao"),
    please=("por favor", "pfv"),
    narrative=("eu tentei", "eu rodei", "voce escreveu", "voce fez", "voce adicionou", "foi", "era"),
    project_nouns=("projeto", "repositorio", "codigo"),
    scopes=("neste projeto", "neste repositorio", "neste codigo", "no nosso projeto", "para este projeto"),
    auxiliaries=("e", "sao", "esta", "estao", "foi", "tem", "era"),
    conditional=("se", "quando"),
)

_NL: Final = LanguageCues(
    "nl",
    frozenset(["de", "het", "een", "en", "of", "van", "in", "is", "zijn", "niet", "dat", "die", "voor", "met", "op",
               "te", "ik", "wij", "we", "je", "jij", "maar", "ook", "wat", "hoe", "dit"]),
    elaboration=("zoals", "bijvoorbeeld", "ik bedoel", "dus"),
    prohibition=("nooit", "niet", "geen", "vermijd", "stop met", "gebruik geen", "doe niet"),
    obligation=("moet", "moeten", "zou moeten", "zouden moeten", "hoort", "noodzakelijk", "verplicht",
                "zorg dat", "zorg ervoor", "vereist", "mag niet", "mogen niet"),
    universal=("altijd", "nooit", "elke keer", "iedere keer", "standaard", "in het algemeen", "voortaan",
               "vanaf nu", "in de toekomst", "alle", "elke"),
    deixis=("dit", "deze", "dat", "die", "hier", "nu", "weer", "opnieuw", "boven", "onder", "eerder", "zelfde"),
    one_off=("voor nu", "op dit moment", "momenteel", "vandaag", "morgen", "gisteren", "eerst", "dan",
             "daarna", "later", "nog niet", "meteen", "deze keer"),
    question=("waarom", "hoe", "waar", "wanneer", "welke", "wie", "kun je", "kunnen we", "kan je", "is er",
              "zijn er", "heb je"),
    self_voice=("ik", "mij", "me", "mijn", "wij", "we", "ons", "onze", "jij", "je", "jou", "jouw", "u", "jullie",
                "laten we"),
    desire=("ik wil", "ik zou graag", "ik denk", "ik vind", "ik vraag me af", "misschien", "waarschijnlijk"),
    reason=("omdat", "want", "aangezien", "zodat", "anders", "daarom", "vanwege"),
    contrast=("in plaats van", "maar"),
    insistence=("ik zei", "ik heb gezegd", "ik heb je gezegd", "zoals ik zei", "ik zei al"),
    replies=("ja", "nee", "ok"),
    interjections=("oh", "ah", "ok", "nou", "dus", "en", "ja", "nee"),
    please=("alsjeblieft", "alstublieft", "graag"),
    narrative=("ik heb", "ik had", "jij hebt", "je hebt", "we hebben", "het was", "dat was"),
    project_nouns=("project", "repo", "repository", "code"),
    scopes=("in dit project", "in deze repo", "in deze repository", "in deze code", "in ons project",
            "voor dit project"),
    auxiliaries=("is", "zijn", "was", "waren", "wordt", "werd", "heeft", "hebben"),
    conditional=("als", "wanneer", "indien"),
)

# Czech and Polish are written with and without diacritics; normalise() strips them, so
# the lists are in their plain ASCII form.
_CS: Final = LanguageCues(
    "cs",
    frozenset(["a", "je", "to", "se", "na", "v", "ze", "do", "tak", "ale", "jak", "mi", "ten", "tam", "neni", "uz",
               "jeste", "by", "aby", "co", "kdyz", "jsi", "jsem", "mas", "muzes", "prosim", "tedy", "taky", "take",
               "jsme", "jen"]),
    elaboration=("jako", "treba", "napriklad", "tzn", "myslim"),
    prohibition=("nikdy", "nedavej", "nepouzivej", "nedelej", "nemen", "nemaz", "nepis", "nespoustej",
                 "nesmis", "nesmi", "nesmime", "prestan", "vyhni se", "zadne", "zadny"),
    obligation=("musi", "musis", "musime", "mel by", "mela by", "melo by", "meli bychom", "mel bys", "je potreba",
                "je treba", "potreba", "treba", "nutne", "povinne", "ujisti se", "pozor", "nesmi", "nesmis"),
    universal=("vzdy", "nikdy", "pokazde", "kazdy", "kazda", "kazde", "vsechny", "standardne", "defaultne",
               "obecne", "od ted", "napriste", "do budoucna", "opetovne"),
    # "to", "ten", "ta" are Czech's all-purpose particles (and "je" its copula): not pointers.
    deixis=("tento", "tato", "toto", "tyto", "tady", "zde", "ted", "znovu", "zase", "nahore", "dole", "predtim",
            "stejne"),
    one_off=("zatim", "ted", "prave", "dnes", "zitra", "vcera", "nejdriv", "nejdrive", "pak", "potom", "pozdeji",
             "jeste ne", "hned", "tentokrat"),
    question=("proc", "jak", "kde", "kdy", "ktery", "ktera", "ktere", "kdo", "muzes", "muzeme", "mohl bys",
              "je to", "jsou", "mas", "nejde", "neni", "vid"),
    self_voice=("ja", "me", "mi", "muj", "moje", "my", "nas", "nam", "nase", "ty", "te", "tobe", "tvuj", "tvoje",
                "vy", "vas", "pojd", "pojdme"),
    desire=("chci", "chtel bych", "chtela bych", "myslim", "mozna", "asi", "nevim", "premyslim", "pral bych",
            "prala bych", "rekl bych"),
    reason=("protoze", "jelikoz", "nebot", "aby", "jinak", "kvuli", "proto", "coz"),
    contrast=("misto", "namisto", "ale", "nybrz"),
    insistence=("rikal jsem", "rikala jsem", "uz jsem rikal", "uz jsem rikala", "uz jsem ti rikal",
                "uz jsem ti rikala", "rekl jsem", "rekla jsem", "jak jsem rikal", "psal jsem", "uz jsem psal"),
    replies=("ano", "ne", "jo", "ok"),
    interjections=("oh", "ah", "ok", "tak", "a", "jo", "ano", "ne"),
    please=("prosim", "prosim te", "prosim vas"),
    narrative=("zkusil jsem", "zkusila jsem", "spustil jsem", "udelal jsi", "napsal jsi", "dal jsi"),
    project_nouns=("projekt", "repozitar", "repo", "kod"),
    scopes=("v tomto projektu", "v tomhle projektu", "v tomto repozitari", "v tomhle repu", "v nasem projektu",
            "v tomto kodu", "pro tento projekt"),
    change_verbs=("pridat", "pridej", "zmenit", "zmen", "opravit", "oprav", "prejmenovat", "smazat", "smaz",
                  "vytvorit", "vytvor", "presunout", "napsat", "napis", "udelat", "udelej", "zkontrolovat",
                  "zkontroluj", "otestovat", "spust", "dopln", "predelat"),
    proposal=("pojd", "pojdme", "zkusme", "co kdyby"),
    auxiliaries=("je", "jsou", "byl", "byla", "bylo", "bude", "ma"),
    anaphora=("ho", "jim", "jej"),
    anaphoric_object=r"\bto (?:[a-z]+ )?[a-z]{2,}(?:at|it|et|out|ovat|nout)\b",
    stative=("vim", "vime", "mam", "mame", "vidim", "myslim"),
    fact_openers=("jsme na", "pouzivame", "pouzivam", "repo je", "projekt pouziva", "server je", "databaze je",
                  "neni tu", "nemame", "bezi na", "mame"),
    conditional=("pokud", "kdyz", "jestli"),
)

_PL: Final = LanguageCues(
    "pl",
    frozenset(["i", "w", "na", "z", "ze", "do", "nie", "to", "sie", "jest", "sa", "jak", "ale", "czy", "co", "tak",
               "ja", "my", "ty", "wy", "prosze", "tylko", "juz"]),
    elaboration=("czyli", "na przyklad", "np.", "typu", "to znaczy"),
    prohibition=("nigdy", "nie uzywaj", "nie rob", "unikaj", "przestan", "nie wolno", "zadnych"),
    obligation=("musi", "musisz", "musimy", "powinien", "powinna", "powinno", "powinnismy", "trzeba",
                "nalezy", "konieczne", "wymagane", "upewnij sie", "nie wolno"),
    universal=("zawsze", "nigdy", "za kazdym razem", "kazdy", "kazda", "kazde", "wszystkie", "domyslnie",
               "ogolnie", "od teraz", "w przyszlosci"),
    deixis=("ten", "ta", "to", "te", "tu", "tutaj", "teraz", "znowu", "ponownie", "powyzej", "ponizej",
            "wczesniej", "juz", "tak samo"),
    one_off=("na razie", "na teraz", "obecnie", "dzisiaj", "dzis", "jutro", "wczoraj", "najpierw", "potem",
             "pozniej", "jeszcze nie", "od razu", "tym razem"),
    question=("dlaczego", "czemu", "jak", "gdzie", "kiedy", "ktory", "ktora", "ktore", "kto", "czy",
              "mozesz", "mozemy"),
    self_voice=("ja", "mnie", "mi", "moj", "moja", "my", "nas", "nam", "nasz", "nasza", "ty", "ciebie", "ci",
                "twoj", "wy", "was", "zrobmy"),
    desire=("chce", "chcialbym", "chcialabym", "mysle", "sadze", "zastanawiam sie", "moze", "chyba",
            "prawdopodobnie", "wole"),
    reason=("bo", "poniewaz", "gdyz", "zeby", "aby", "inaczej", "w przeciwnym razie", "dlatego", "z powodu"),
    contrast=("zamiast", "lecz", "ale"),
    insistence=("mowilem", "mowilam", "powiedzialem", "powiedzialam", "jak mowilem", "juz mowilem"),
    replies=("tak", "nie", "no", "ok"),
    interjections=("oh", "ah", "ok", "no", "a", "tak", "nie"),
    please=("prosze",),
    narrative=("probowalem", "probowalam", "uruchomilem", "napisales", "zrobiles", "dodales", "bylo", "byl"),
    project_nouns=("projekt", "repozytorium", "repo", "kod"),
    scopes=("w tym projekcie", "w tym repozytorium", "w tym repo", "w naszym projekcie", "w tym kodzie",
            "dla tego projektu"),
    auxiliaries=("jest", "sa", "byl", "byla", "bylo", "ma"),
    conditional=("jesli", "jezeli", "gdy", "kiedy"),
)

LANGUAGES: Final[dict[str, LanguageCues]] = {c.code: c for c in (_EN, _FR, _DE, _ES, _IT, _PT, _NL, _CS, _PL)}

_WORD: Final = lazy(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")


def normalise(text: str) -> str:
    """Lower case, accents stripped, typographic apostrophes made plain."""
    decomposed = unicodedata.normalize("NFKD", text.replace("’", "'").replace("‘", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def words(text: str) -> list[str]:
    """The words of normalised ``text`` (contractions kept whole: ``don't``)."""
    return _WORD.findall(normalise(text))


def detect_language(text: str) -> LanguageCues:
    """The language with the most distinct function words in ``text`` (English on a tie or no evidence).

    Distinct, because a word said three times ("no no no, don't ...") is one piece of evidence."""
    tokens = set(words(text[:3000]))
    best, best_hits = _EN, 0
    for cues in LANGUAGES.values():
        hits = len(tokens & cues.function_words)
        if hits > best_hits:
            best, best_hits = cues, hits
    return best


@lru_cache(maxsize=64)
def _pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """One regex matching any of ``phrases`` as whole words of normalised text."""
    alts = sorted({re.escape(p) for p in phrases}, key=len, reverse=True)
    return re.compile(r"(?<![a-z0-9'_])(?:" + "|".join(alts) + r")(?![a-z0-9'_])")


def find(phrases: tuple[str, ...], normalised: str) -> list[str]:
    """Every cue of ``phrases`` present in ``normalised`` text (as whole words)."""
    return _pattern(phrases).findall(normalised) if phrases else []


def matches(phrases: tuple[str, ...], normalised: str) -> list[re.Match[str]]:
    """Where each cue of ``phrases`` occurs in ``normalised`` text (whole words), in order."""
    return list(_pattern(phrases).finditer(normalised)) if phrases else []


def blank(phrases: tuple[str, ...], normalised: str) -> str:
    """``normalised`` text with every cue of ``phrases`` (whole words) replaced by a space."""
    return _pattern(phrases).sub(" ", normalised) if phrases else normalised


def starts_with(phrases: tuple[str, ...], normalised: str) -> str | None:
    """The cue of ``phrases`` that ``normalised`` text opens with, or None."""
    m = _pattern(phrases).match(normalised.lstrip(" -*>•\"'`("))
    return m.group(0) if m else None
