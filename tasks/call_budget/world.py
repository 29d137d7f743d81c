"""The world of ``call_budget``: merchants, their hidden scripts, and the call transcript's format.

Every template and the rule that makes it correct in its own context is in tasks/README.md (call_budget).
"""

from __future__ import annotations

import random
import re

MAX_CALLS = 3
PHONE_LINES = 4  # the telephony API's concurrent outbound lines: ``max_calls_per_turn``
STANDARD_OFFER = 15
ACC, DEC, CB, CTR = "ACCEPTED", "DECLINED", "CALL BACK LATER", "COUNTER-OFFER"
# Scripts: the outcome of attempt 1, 2, 3. Beyond the script the last outcome repeats.
SCRIPTS = {
    "A": [ACC],
    "D": [DEC],
    "CA": [CB, ACC],
    "CD": [CB, DEC],
    "KA": [CTR, ACC],
    "CKA": [CB, CTR, ACC],
    "CCA": [CB, CB, ACC],
    "CCC": [CB, CB, CB],
    "CCK": [CB, CB, CTR],
}
WEIGHTS = {"A": 1, "D": 1, "CA": 3, "CD": 2, "KA": 2, "CKA": 2, "CCA": 2, "CCC": 2, "CCK": 1}
CLOSABLE = {"A", "CA", "KA", "CKA", "CCA"}

FIRST = [
    "Rossi",
    "Blue Harbor",
    "Golden Lotus",
    "Miller's",
    "Casa",
    "Northside",
    "Sunrise",
    "Old Mill",
    "Green Leaf",
    "Harbor View",
    "Kaiser",
    "Little Tokyo",
    "Riverside",
    "Maple",
    "Atlas",
    "Corner",
    "Silver Spoon",
    "Urban",
    "Lucky Star",
    "Bella",
]
KIND = [
    "Pizzeria",
    "Florist",
    "Bakery",
    "Hardware",
    "Books",
    "Tailors",
    "Deli",
    "Bike Shop",
    "Pharmacy",
    "Coffee Roasters",
    "Print Shop",
    "Optics",
    "Pet Supplies",
    "Wine Bar",
    "Noodle House",
]
CITIES = ["Milan", "Porto", "Leeds", "Lyon", "Graz", "Utrecht", "Cork", "Gdansk", "Bilbao", "Aarhus"]
SONGS = [
    "Greensleeves (synth)",
    "Für Elise (pan flute)",
    "a smooth-jazz loop",
    "The Four Seasons, Spring",
    "an 8-bit bossa nova",
    "Canon in D (marimba)",
]
SMALL_TALK = [
    "Sorry, it's been a madhouse since the street fair started, half the staff is out front.",
    "Did you see the weather? Third day of rain, nobody comes in without an umbrella.",
    "Our card terminal froze twice this morning, so forgive me if I sound distracted.",
    "You're the second supplier to call today, the first one wanted to sell us new shelving.",
    "We just repainted the front, so if you come by, mind the door, it's still sticky.",
    "My cousin does the books, she's the one who usually decides this kind of thing.",
    "The delivery van is blocking the loading bay again, hold on... okay, I'm back.",
    "We've been in this spot for eleven years, longer than the bank across the road.",
]
IVR = [
    'IVR: "Thank you for calling {name}. For opening hours, press 1. For orders and catering, press 2. '
    "For supplier offers and partnerships that were ACCEPTED or DECLINED in the past, press 3. "
    'To hear these options again, press 9."',
    'IVR: "Welcome to {name}, {city}. Our offers this week: 2-for-1 on selected items. If you are a supplier, '
    'press 4. If you are calling about an order, press 5. All other enquiries, stay on the line."',
    'IVR: "You have reached {name}. Please note our new hours. For deliveries press 1, for accounts press 2, '
    'for the manager press 0. Calls may be recorded for training purposes."',
]

# the transcript's first and last lines (tools.py writes them; the policy reads them)
HEADER = re.compile(r"=== Outbound call · (M\d{2}) ")
DISPOSITION = re.compile(r"disposition: (ACCEPTED|DECLINED|CALL BACK LATER|COUNTER-OFFER)(?: at)? ?(\d+)?%?\]")


def generate_merchants(count: int, seed: int) -> list[dict]:
    """``count`` merchants for ``seed``: id, name, city, phone, hidden script, counter-offer rate, contact."""
    rng = random.Random(f"call_budget:{seed}")
    kinds = ["CCC", "CCK", "CCA"][:count]
    kinds += rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()), k=count - len(kinds))
    rng.shuffle(kinds)
    names = rng.sample([f"{a} {b}" for a in FIRST for b in KIND], count)
    merchants = []
    for index, (kind, name) in enumerate(zip(kinds, names, strict=False), start=1):
        merchants.append(
            {
                "id": f"M{index:02d}",
                "name": name,
                "city": rng.choice(CITIES),
                "phone": f"+{rng.randint(30, 49)} {rng.randint(100, 999)} {rng.randint(100000, 999999)}",
                "script": kind,
                "counter": rng.randint(6, 12),
                "contact": rng.choice(
                    ["Giulia", "Tom", "Ana", "Pieter", "Marta", "Sean", "Lena", "Jonas", "Ines", "Karim"]
                ),
            }
        )
    return merchants
