"""The shared English side: frames (what a line says), their English wordings, the slot
vocabulary, and English rendering.

A frame is one meaning with slots. Every target-language module gives one pattern per frame
id, so a frame's translation never depends on which English wording was picked. Wordings
may carry a register `style`: polite and slangy English for the same frame is how previous
lines reveal the register of a scene, while the translation follows the scene's register.

Frame kinds steer document sampling (documents.py):
  address   second person; the translation shows formality / addressee (most are neutral
            English: "Did you see the letter?")
  speaker   first person; Polish shows the speaker's gender, some also the addressee
  neutral   no context-dependent phenomenon
  greeting  lines with a vocative ("Thanks, Mr Novak."): names, titles and honorifics
  styled    register-flavoured English ("Chill out." / "Please calm down.")
  group     only said to a group of people
  anaphor   "It's on the table.": `it` for an object (slot `obj`) named 1-3 lines earlier
            in the same block (documents.py); the target pronoun (or a word agreeing with it)
            takes that noun's gender, which only the earlier line shows
  self      the speaker says what they are ("I'm not a little girl anymore."): the slot
            `self` is the speaker's gender, so the line shows it in every language and is
            never labelled; it tells the next lines who speaks and who listens
  others    an object (slot `obj`) with a third person ("Our neighbour has the key.", "The
            key belongs to my brother."): two nouns, the object first or last, so that a
            pronoun after the line has a distractor (Voita et al. 2018, Table 7); the person
            is never an antecedent, as `it` only refers to objects. One wording ("I gave the
            key to my sister.") shows the speaker's gender in Polish and Russian
"""
from __future__ import annotations

from dataclasses import dataclass

from mtcue.data.synth.situation import FEMININE, FORMAL, INFORMAL, MASCULINE
from mtcue.data.synth.template import Language

F, I = FORMAL, INFORMAL


@dataclass(frozen=True)
class Frame:
    kind: str
    slots: tuple[str, ...]
    english: tuple[tuple[str, str | None], ...]  # (pattern, style or None)


def _frames(kind: str, table: dict) -> dict[str, Frame]:
    """Build frames of one kind from {id: (slots, [pattern | (pattern, style), ...])}."""
    out = {}
    for frame_id, (slots, wordings) in table.items():
        english = tuple(w if isinstance(w, tuple) else (w, None) for w in wordings)
        out[frame_id] = Frame(kind, tuple(slots), english)
    return out


FRAMES: dict[str, Frame] = {
    **_frames("address", {
        "did_you_verb": (("verb", "obj"), ["Did you {verb:base} {obj:the}?"]),
        "have_you_verb_my": (("verb", "obj"), ["Have you {verb:pp} my {obj}?"]),
        "is_this_yours": (("obj",), ["Is this your {obj}?"]),
        "where_is_yours": (("obj",), ["Where is your {obj}?"]),
        "do_you_have": (("obj",), ["Do you have {obj:the}?"]),
        "do_you_need": (("obj",), ["Do you need {obj:a}?"]),
        "are_you_adj": (("adj",), ["Are you {adj}?"]),
        "were_you_adj": (("adj",), ["Were you {adj}?"]),
        "you_were_right": ((), ["You were right about that."]),
        "where_were_you": (("when",), ["Where were you {when}?"]),
        "what_do_you_want": ((), ["What do you want?"]),
        "where_do_you_live": ((), ["Where do you live?"]),
        "where_do_you_work": ((), ["Where do you work?"]),
        "what_do_you_think": ((), ["What do you think?"]),
        "do_you_understand": ((), ["Do you understand?"]),
        "can_you_hear_me": ((), ["Can you hear me?"]),
        "what_are_you_doing": ((), ["What are you doing here?"]),
        "do_you_know_person": (("person",), ["Do you know {person}?"]),
        "do_you_want_to": (("inf",), ["Do you want to {inf}?"]),
        "can_you_inf": (("inf",), ["Can you {inf}?"]),
        "maybe_you_should": (("inf",), ["Maybe you should {inf}."]),
        "would_you_like_to": (("inf",), ["Would you like to {inf}?"]),
        "did_you_want_to": (("inf",), ["Did you want to {inf}?"]),
        "talk_to_you": ((), ["I want to talk to you."]),
        "have_for_you": (("obj",), ["I have {obj:a} for you."]),
        "call_you": (("later",), ["I'll call you {later}."]),
        "help_you": ((), ["I can help you."]),
        "how_are_you": ((), ["How are you?"]),
        "did_you_sleep": ((), ["Did you sleep well?"]),
        "have_you_eaten": ((), ["Have you eaten yet?"]),
        "how_did_you_know": ((), ["How did you know?"]),
        "why_lie": ((), ["Why did you lie to me?"]),
        "why_not_call": ((), ["Why didn't you call?"]),
        "you_promised": ((), ["You promised."]),
        "great_job": ((), ["You did a great job."]),
        "thanks_for_your": (("thing",), ["Thank you for your {thing}."]),
        "sit_down": ((), ["Sit down."]),
        "come_here": ((), ["Come here."]),
        "wait_here": ((), ["Wait here."]),
        "listen_to_me": ((), ["Listen to me."]),
        "tell_truth": ((), ["Tell me the truth."]),
        "close_door": ((), ["Close the door."]),
        "give_me": (("obj",), ["Give me {obj:the}."]),
        "take_obj": (("obj",), ["Take {obj:the}."]),
        "help_me": ((), ["Help me."]),
        "dont_worry": ((), ["Don't worry."]),
    }),
    **_frames("speaker", {
        "i_verbed": (("verb", "obj"), ["I {verb:past} {obj:the}."]),
        "i_verbed_your": (("verb", "obj"), ["I {verb:past} your {obj}."]),
        "i_was_adj": (("adj",), ["I was {adj}."]),
        "im_adj": (("adj",), ["I'm {adj}."]),
        "i_wanted_to": (("inf",), ["I wanted to {inf}."]),
        "id_like_to": (("inf",), ["I'd like to {inf}."]),
        "i_should": (("inf",), ["I should {inf}."]),
        "couldnt_find": (("obj",), ["I couldn't find my {obj}."]),
        "went_home": ((), ["I went home early."]),
        "didnt_know": ((), ["I didn't know that."]),
        "i_forgot": ((), ["I forgot."]),
        "thought_so": ((), ["I thought so."]),
        "did_everything": ((), ["I did everything I could."]),
        "thought_you_adj": (("adj",), ["I thought you were {adj}."]),
        "told_you": ((), ["I told you so."]),
        "saw_you": (("when",), ["I saw you {when}."]),
        "waited_for_you": ((), ["I waited for you."]),
        "believed_you": ((), ["I believed you."]),
        "worried_about_you": ((), ["I was worried about you."]),
        "proud_of_you": ((), ["I'm proud of you."]),
        "missed_you": ((), ["I missed you."]),
    }),
    **_frames("neutral", {
        "where_is": (("obj",), ["Where is {obj:the}?"]),
        "on_table": (("obj",), ["{obj:the} is on the table."]),
        "obj_gone": (("obj",), ["{obj:the} has disappeared."]),
        "we_need": (("obj",), ["We need {obj:a}."]),
        "train_leaves": (("hour",), ["The train leaves at {hour}."]),
        "he_verbed": (("he", "verb", "obj"), ["{he} {verb:past} {obj:the}."]),
        "he_is_adj": (("he", "adj"), ["{he} is {adj}."]),
        "he_wants_to": (("he", "inf"), ["{he} wants to {inf}."]),
        "where_is_person": (("person",), ["Where is {person}?"]),
        "dont_know": ((), ["I don't know."]),
        "getting_late": ((), ["It's getting late."]),
        "have_to_go": ((), ["We have to go."]),
        "what_time": ((), ["What time is it?"]),
        "raining": ((), ["It's raining again."]),
        "bad_idea": ((), ["That's not a good idea."]),
        "lets_go": ((), ["Let's go."]),
        "im_sorry": ((), ["I'm sorry."]),
        "someone_door": ((), ["Someone is at the door."]),
        "yes": ((), ["Yes."]),
        "no": ((), ["No."]),
        "okay": ((), ["Okay."]),
    }),
    **_frames("greeting", {
        "greet_evening": (("voc",), [("Good evening, {voc}.", F)]),
        "greet_morning": (("voc",), [("Good morning, {voc}.", F)]),
        "greet_hello": (("voc",), [("Hey, {voc}.", I), ("Hi, {voc}.", I), "Hello, {voc}."]),
        "thank_voc": (("voc",), [("Thank you, {voc}.", F), ("Thanks, {voc}.", I)]),
        "excuse_voc": (("voc",), [("Excuse me, {voc}.", F), ("Sorry, {voc}.", I)]),
        "whats_up": (("voc",), [("What's up, {voc}?", I), "What's going on, {voc}?"]),
        "certainly": (("voc",), [("Certainly, {voc}.", F), ("Sure thing, {voc}.", I),
                                 "Of course, {voc}."]),
        "as_you_wish": (("voc",), [("As you wish, {voc}.", F), ("Whatever you say, {voc}.", I)]),
        "forgive_me": (("voc",), [("Forgive me, {voc}.", F), ("My bad, {voc}.", I)]),
        "grab_beer": (("voc",), [("Gonna grab a beer, {voc}.", I),
                                 "I'm going to get a beer, {voc}."]),
    }),
    **_frames("styled", {
        "calm_down": ((), [("Please calm down.", F), ("Chill out.", I), "Calm down."]),
        "look_this": ((), [("Please have a look at this.", F), ("Yo, check this out.", I),
                           "Look at this."]),
        "kidding": ((), [("Surely you must be joking.", F), ("You gotta be kidding me.", I),
                         "You're joking."]),
        "disturb": ((), [("I'm terribly sorry to disturb you.", F), ("Sorry to bug you.", I)]),
        "honour": ((), [("It is an honour to meet you.", F)]),
        "nice_meet": ((), [("A pleasure to meet you.", F), ("Great to meet ya.", I),
                           "Nice to meet you."]),
        "offer_drink": (("drink",), [("May I offer you {drink}?", F), ("Want {drink}?", I),
                                     "Would you like {drink}?"]),
        "could_you_req": (("req",), [("Would you kindly {req}?", F), ("Just {req}, okay?", I),
                                     "Could you {req}?"]),
        "grateful": ((), [("I'm most grateful to you.", F), "I'm really grateful to you."]),
        "help_yourself": ((), ["Help {yourself}."]),
        "amazing": ((), [("How extraordinary!", F), ("No way, that's awesome!", I),
                         "That's amazing!"]),
        "disagree": ((), [("With all due respect, I disagree.", F), ("Nah, I don't buy it.", I),
                          "I don't agree."]),
        "see_you": ((), [("Goodbye, and thank you.", F), ("Cool, see ya.", I), "See you later."]),
        "splendid": ((), [("Splendid.", F), ("Awesome.", I), "Great."]),
        "proceed": ((), [("Let us proceed.", F), ("Let's keep rolling.", I), "Let's continue."]),
        "no_idea": ((), [("I'm afraid I have no idea.", F), ("Dunno, no clue.", I),
                         "I have no idea."]),
        "really_good": ((), [("This is delightful.", F), ("This is so freaking good.", I),
                             "This is really good."]),
        "long_day": ((), [("It has been a rather long day.", F), ("What a crazy day, huh?", I),
                          "It's been a long day."]),
        "no_problem": ((), [("It is no trouble at all.", F), ("No biggie.", I), "No problem."]),
        "good_idea": ((), [("What an excellent idea.", F), ("Sweet, great idea!", I), "Good idea."]),
        "very_well": ((), [("Very well.", F), ("Yeah, sure, whatever.", I), "All right."]),
        "good_night": ((), [("Good night, and sleep well.", F), ("Night, sleep tight.", I),
                            "Good night."]),
    }),
    **_frames("self", {
        "self_little": (("self",), ["I'm not a little {self:girl:boy} anymore."]),
        "self_grown": (("self",), ["I'm a grown {self:woman:man}.",
                                   ("Look, I'm a grown {self:woman:man}.", I)]),
        "self_kind": (("self",), ["I'm not that kind of {self:girl:guy}."]),
        "self_look_like": (("self",), ["Do I look like a {self:waitress:waiter}?"]),
        "self_old": (("self",), ["I'm just an old {self:woman:man}.",
                                 ("I am merely an old {self:woman:man}.", F)]),
        "self_insist": (("self",), [("As a {self:lady:gentleman}, I must insist.", F)]),
        "self_lucky": (("self",), ["I'm a lucky {self:woman:man}.",
                                   ("I consider myself a fortunate {self:woman:man}.", F)]),
        "self_big": (("self",), ["I'm a big {self:girl:boy}, I can handle it."]),
        "self_mother": (("self",), ["I'm {self:a mother:a father}, I worry.",
                                    ("I'm {self:a mom:a dad}, I freak out.", I)]),
    }),
    **_frames("anaphor", {
        "it_on_table": (("obj",), ["It's on the table."]),
        "it_gone": (("obj",), ["It has disappeared."]),
        "cant_find_it": (("obj",), ["I can't find it."]),
        "found_it": (("verb", "obj"), ["Did you find it?"]),  # verb: always "find"
        "take_it": (("obj",), ["Take it."]),
    }),
    **_frames("others", {  # the object last in two, first in two (the last shows the speaker's gender)
        "neighbour_has": (("obj",), ["Our neighbour has {obj:the}."]),
        "sister_looks_for": (("obj",), ["My sister is looking for {obj:the}."]),
        "belongs_to_brother": (("obj",), ["{obj:the} belongs to my brother."]),
        "gave_to_sister": (("obj",), ["I gave {obj:the} to my sister."]),
    }),
    **_frames("group", {
        "group_morning": ((), ["Good morning, everyone."]),
        "group_attention": ((), [("Ladies and gentlemen, may I have your attention?", F)]),
        "group_listen": ((), [("Guys, listen up!", I)]),
        "thank_all": ((), ["Thank you all for coming."]),
        "all_ready": ((), ["Are you all ready?"]),
    }),
}

# Slot vocabulary: slot kind -> value -> English. Target modules translate every value.
VERBS = {  # base, past, past participle
    "see": ("see", "saw", "seen"), "find": ("find", "found", "found"),
    "bring": ("bring", "brought", "brought"), "lose": ("lose", "lost", "lost"),
    "take": ("take", "took", "taken"), "forget": ("forget", "forgot", "forgotten"),
    "hide": ("hide", "hid", "hidden"), "read": ("read", "read", "read"),
    "buy": ("buy", "bought", "bought"), "open": ("open", "opened", "opened"),
}
OBJECTS = {k: k for k in ("letter", "key", "ticket", "phone", "passport", "wallet", "bag", "book",
                          "photo", "box", "umbrella", "suitcase", "map")}
# Verbs that only make sense with some objects; the others take any object.
VERB_OBJECTS = {
    "read": ("letter", "book", "map"),
    "buy": ("ticket", "phone", "bag", "book", "umbrella", "suitcase", "map"),
    "open": ("letter", "bag", "book", "box", "suitcase"),
}
LEXICON: dict[str, dict[str, str]] = {
    "thing": {"help": "help", "patience": "patience", "time": "time"},
    "adj": {k: k for k in ("tired", "ready", "sure", "hungry", "angry", "happy", "busy", "alone",
                           "sick", "worried", "surprised", "disappointed", "nervous")},
    "inf": {
        "go_home": "go home", "help": "help", "stay": "stay here", "leave": "leave now",
        "talk": "talk to him", "sleep": "get some sleep", "eat": "eat something",
        "dance": "dance", "wait": "wait", "try_again": "try again", "take_car": "take the car",
        "police": "call the police", "doctor": "see a doctor", "come_along": "come with us",
        "film": "watch a film", "coffee": "have a coffee",
    },
    "req": {
        "seat": "take a seat", "moment": "wait a moment", "sign": "sign here",
        "come": "come with me", "door": "close the door", "form": "fill in this form",
        "louder": "speak a little louder",
    },
    "when": {"yesterday": "yesterday", "last_night": "last night", "morning": "this morning",
             "sunday": "on Sunday", "party": "at the party"},
    "later": {"tomorrow": "tomorrow", "tonight": "tonight", "later": "later",
              "monday": "on Monday", "hour": "in an hour"},
    "hour": {h: h for h in ("five", "six", "seven", "eight", "nine", "ten")},
    "drink": {"tea": "some tea", "coffee": "some coffee", "wine": "a glass of wine",
              "drink": "something to drink"},
    "person": {"brother": "my brother", "sister": "my sister", "doctor": "the doctor",
               "neighbour": "our neighbour", "lawyer": "the lawyer", "wife": "his wife",
               "husband": "her husband", "boss": "the boss"},
    "he": {MASCULINE: "he", FEMININE: "she"},
    "self": {MASCULINE: "man", FEMININE: "woman"},  # the speaker's own gender
}
SLOT_VALUES: dict[str, tuple[str, ...]] = {
    "verb": tuple(VERBS), "obj": tuple(OBJECTS), **{k: tuple(v) for k, v in LEXICON.items()},
}

# The nouns an English line may contain (slot values and the patterns' own), for the anaphora
# analysis: which words of a context line could a pronoun refer to.
NOUN_WORDS = frozenset({*OBJECTS.values(), "brother", "sister", "doctor", "neighbour", "lawyer", "wife",
                        "husband", "boss", "table", "train", "door", "truth", "job", "beer", "idea", "day",
                        "party", "film", "car", "police", "coffee", "tea", "wine", "glass", "drink", "form",
                        "seat", "moment", "help", "patience", "time", "attention", "mother", "father",
                        "mom", "dad", "everyone", "clue", "honour", "pleasure", "trouble"})

FIRST_NAMES = {
    FEMININE: ("Anna", "Maria", "Kate", "Emma", "Laura", "Sarah", "Julia", "Lucy", "Helen",
               "Clara", "Nina", "Alice", "Eva", "Rosa", "Sophie", "Grace"),
    MASCULINE: ("Tom", "John", "Mark", "Peter", "David", "Jack", "Paul", "Adam", "Daniel", "Max",
                "Leo", "Simon", "Frank", "Victor", "Oscar", "Henry"),
}
SURNAMES = ("Harris", "Carter", "Bennett", "Miller", "Wright", "Novak", "Berg", "Hale", "Fischer",
            "Morgan", "Reed", "Walsh", "Grant", "Keller", "Lang", "Foster", "Hayes", "Brooks")



class English(Language):
    code = "en"
    lexicon = LEXICON
    titles = {"mr": "Mr", "mrs": "Mrs", "ms": "Ms"}
    vocative_words = {"sir": "sir", "madam": "madam", "man": "man", "dude": "dude",
                      "buddy": "buddy", "girl": "girl", "lady": "young lady",
                      "ladies": "ladies and gentlemen", "guys": "guys"}

    def h_verb(self, slots, situation, form):
        return VERBS[slots["verb"]][("base", "past", "pp").index(form)]

    def h_obj(self, slots, situation, determiner=""):
        noun = OBJECTS[slots["obj"]]
        if determiner == "the":
            return f"the {noun}"
        if determiner == "a":
            return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"
        return noun

    def h_yourself(self, slots, situation):
        # English shows the number of addressees here, and nowhere else.
        return "yourselves" if situation.plural else "yourself"


ENGLISH = English()
