"""The generated night of ``late_question``: inspection records, and the supervisor's question about them.

A record is one container inspection logged at the Port of Valmera overnight: some 30 specific
fields (vessel, container, seal, parties, cargo, weights, reefer readings, scan, officer, truck,
outcome) and a few sentences of remarks. The question is drawn from the seed among
``QUESTION_KINDS``; each asks about fields a reader would not think important while reading
(a seal, a truck plate, a scanner, a weight difference, a shipper), and its answer is a set of
container numbers that the raw records determine. Rules (tested in tests/test_late_question.py):

* every container number and every seal number is unique in a night;
* ``seal``: the asked seal is on exactly one record; ``truck`` and ``shipper``: the asked plate or
  shipper is on ``PLANTED`` records at least (plates and shippers recur by chance too); ``scanner``: the
  answer is every record of the asked scanner whose result is ``no anomalies``; ``overweight``: the
  weighed mass is over 5% above the declared one on the planted records only, every other record
  differs by at most 4.5% (no borderline case);
* at least one answer record lies in the middle of the night (after the first two batches, before
  the last 40% of the records), so neither the first nor the newest batches hold the whole answer.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

QUESTION_KINDS = ("seal", "truck", "scanner", "overweight", "shipper")
PLANTED = 3  # records that share the asked truck plate or shipper, and overweight records
OVERWEIGHT = 1.05  # "more than 5 percent" over the declared gross weight

VESSELS = [
    ("MV Kestrel Dawn", "9481736", "Brightwater Shipping"),
    ("MV Orla Maersk", "9632058", "Maersk Line Agency"),
    ("MV Santa Iria", "9355107", "Atlantica Agencies"),
    ("MV Nordic Tern", "9720491", "Fjordlink Agency"),
    ("MV Cap Serrat", "9402863", "Meridian Port Services"),
    ("MV Hanne Bay", "9566214", "Brightwater Shipping"),
]
OWNER_CODES = ["MSKU", "TGHU", "CMAU", "HLXU", "OOLU", "SEGU", "TCLU", "MEDU", "FCIU", "BMOU"]
DRY_SIZES = ["20' dry (22G1)", "40' dry (42G1)", "40' high cube (45G1)"]
REEFER = "40' reefer (45R1)"
PERISHABLE = {"0805.10", "0304.71"}  # the cargo that travels in reefers (HS codes of CARGO)
SHIPPERS = [
    "Halvorsen Ceramics AS, Bergen",
    "Duarte & Filhos Lda, Porto",
    "Kessler Maschinenbau GmbH, Kassel",
    "Olmedo Citrus SL, Valencia",
    "Baltic Timber Export, Klaipeda",
    "Nakamura Precision KK, Nagoya",
    "Sorensen Frozen Foods, Esbjerg",
    "Atlas Textile Mills, Izmir",
    "Verdant Coffee Traders, Santos",
    "Polar Fisheries Ltd, Tromso",
    "Marchetti Arredamenti, Treviso",
    "Quinta do Vale Wines, Regua",
    "Dobrev Auto Parts, Plovdiv",
    "Greenleaf Paper Co, Oulu",
    "Sahel Cotton Cooperative, Dakar",
    "Ivory Coast Cocoa Union, Abidjan",
    "Lindgren Steel Wire, Lulea",
    "Castellan Olive Oil, Jaen",
    "Mekong Garment Works, Hai Phong",
    "Rheinwerk Chemicals, Ludwigshafen",
    "Cordoba Leather SA, Cordoba",
    "Haldane Whisky Bond, Leith",
    "Tanaka Electronics, Osaka",
    "Bosphorus Glassworks, Istanbul",
]
CONSIGNEES = [
    "Valmera Building Supply",
    "Iberia Home Centres",
    "Westport Distribution",
    "Carvalho Retail Group",
    "Harbourline Foods",
    "Sierra Industrial Parts",
    "Northgate Wholesale",
    "Alvarez Trading House",
    "Lusitania Logistics",
    "Meseta Cold Stores",
]
CARGO = [
    ("ceramic floor tiles", "6907.21", "pallets"),
    ("machine tool spindles", "8466.93", "crates"),
    ("fresh oranges", "0805.10", "pallets"),
    ("sawn pine boards", "4407.11", "bundles"),
    ("ball bearings", "8482.10", "drums"),
    ("frozen cod fillets", "0304.71", "cartons"),
    ("cotton bed linen", "6302.31", "bales"),
    ("green coffee beans", "0901.11", "bags"),
    ("upholstered chairs", "9401.61", "cartons"),
    ("bottled red wine", "2204.21", "cases"),
    ("brake discs", "8708.30", "pallets"),
    ("newsprint rolls", "4801.00", "rolls"),
    ("raw cocoa beans", "1801.00", "bags"),
    ("galvanised steel wire", "7217.20", "coils"),
    ("extra virgin olive oil", "1509.20", "drums"),
    ("laptop batteries", "8507.60", "cartons"),
    ("plate glass", "7005.29", "crates"),
]
ORIGINS = ["Gdansk", "Rotterdam", "Antwerp", "Santos", "Tanger Med", "Piraeus", "Hamburg", "Valencia", "Genoa", "Izmir"]
DESTINATIONS = ["Valmera inland depot", "Valmera free zone", "Carrazeda rail terminal", "Serpa bonded warehouse"]
SCANNERS = ["XR-1", "XR-2", "XR-3", "XR-4", "XR-5", "XR-6"]
CLEAN = "no anomalies"
ANOMALIES = [
    "density anomaly in the rear third",
    "organic mass behind the front wall",
    "irregular load profile, left side",
    "metal object inconsistent with the manifest",
]
OFFICERS = [
    ("A. Lindqvist", "3318"),
    ("R. Okafor", "2741"),
    ("M. Teixeira", "3902"),
    ("D. Vukovic", "1187"),
    ("S. Almeida", "2650"),
    ("J. Brennan", "3475"),
]
K9 = ["none", "none", "none", "Falk", "Bruma", "Tesla"]
HAULIERS = ["Norrland Haulage", "Tejo Transportes", "Rapid Box Carriers", "Costa Verde Logistica", "Ferreira & Irmaos"]
DRIVERS = [
    "J. Mensah",
    "P. Sousa",
    "L. Horvat",
    "K. Nowak",
    "E. Duarte",
    "T. Brandt",
    "N. Rocha",
    "I. Petrov",
    "B. Silva",
]
LANES = ["G1", "G2", "G3", "G4", "G5"]
OUTCOMES = [
    "CLEARED",
    "CLEARED",
    "CLEARED",
    "HELD for physical examination",
    "RELEASED after physical examination",
    "REFERRED to phytosanitary inspection",
]
REMARKS = [
    "Door gasket torn on the lower {side} corner; photographed as PH-{n4}.",
    "Driver {driver} waited {minutes} minutes at lane {lane} before the scan slot opened.",
    "Bill of lading BL-{n6} matches the manifest; commercial invoice INV-{n5} shows {currency} {amount}.",
    "Temperature logger downloaded to the shared drive as TL-{n5}; no excursion flagged by the carrier.",
    "Packing list lists {count} {unit}; tally at the door counted {count} {unit}.",
    "Container floor checked with the fibrescope through vent {vent}; nothing unusual seen.",
    "Consignee's broker {broker} asked for an expedited release, reference BR-{n4}.",
    "Previous seal of the carrier logged in the seal register as entry {n4}.",
    "Fumigation certificate FC-{n5} dated {day} {month} attached to the record.",
    "Corner casting dented on the {side} top rail; not structural, noted for the carrier.",
    "Spot check of {spot} cartons from the door end; contents match the description.",
    "Wind at the scanning bay gusting {wind} knots; scan repeated once for image quality.",
]
BROKERS = ["Marisol Customs Brokerage", "Atlantic Clearing", "Port Agency Ribeiro", "Quayside Brokers"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October"]


@dataclass(frozen=True)
class Record:
    """One inspection record of the night, every field as the feed prints it."""

    id: str
    time: str
    berth: str
    lane: str
    vessel: str
    imo: str
    voyage: str
    agent: str
    container: str
    size: str
    seal: str
    seal_kind: str
    shipper: str
    consignee: str
    cargo: str
    hs_code: str
    origin: str
    destination: str
    declared_kg: int
    weighed_kg: int
    tare_kg: int
    reefer: str
    scanner: str
    image: str
    scan_result: str
    officer: str
    badge: str
    k9: str
    minutes: int
    plate: str
    driver: str
    haulier: str
    outcome: str
    remarks: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    """The supervisor's question: its kind and the value it asks about (``""`` for ``overweight``)."""

    kind: str
    value: str


@dataclass(frozen=True)
class Night:
    """The records in feed order, the question and its answer (container numbers)."""

    records: list[Record]
    question: Question
    answer: list[str]


def container_key(text: object) -> str:
    """A container number compared as the grader compares it: letters and digits only, upper case."""
    return re.sub(r"[^0-9A-Z]", "", str(text).upper())


def matches(question: Question, fields: dict[str, str]) -> bool:
    """Whether a record, given by its printed fields (``Record`` field name -> text), answers ``question``.

    A field that is absent (a line not read) never matches: the record is not counted."""
    if question.kind == "seal":
        return fields.get("seal") == question.value
    if question.kind == "truck":
        return fields.get("plate") == question.value
    if question.kind == "shipper":
        return fields.get("shipper") == question.value
    if question.kind == "scanner":
        return fields.get("scanner") == question.value and fields.get("scan_result") == CLEAN
    if question.kind == "overweight":
        declared, weighed = fields.get("declared_kg", ""), fields.get("weighed_kg", "")
        if not declared.isdigit() or not weighed.isdigit():
            return False
        return int(weighed) > int(declared) * OVERWEIGHT
    return False


def record_fields(record: Record) -> dict[str, str]:
    """A record's fields as text (what ``matches`` reads)."""
    return {name: str(value) for name, value in vars(record).items() if name != "remarks"}


class _Draw:
    """Draws the fields of a night's records from one seeded generator, numbers unique where they must be."""

    def __init__(self, rng: random.Random, count: int) -> None:
        self.rng = rng
        self.containers = iter(rng.sample(range(1_000_000, 9_999_999), count))
        self.seals = iter(rng.sample(range(100_000, 999_999), count))
        letters = "BCDFGHJKLMNPRSTVXZ"
        self.plates = [
            f"VAL-{rng.randrange(100, 1000)}-{rng.choice(letters)}{rng.choice(letters)}" for _ in range(count)
        ]

    def remark(self, template: str, lane: str, driver: str) -> str:
        rng = self.rng
        count = rng.randrange(8, 60)
        unit = rng.choice(["pallets", "cartons", "crates", "bags"])
        return template.format(
            side=rng.choice(["left", "right"]),
            n4=rng.randrange(1000, 10000),
            n5=rng.randrange(10000, 100000),
            n6=rng.randrange(100000, 1000000),
            driver=driver,
            minutes=rng.randrange(5, 70),
            lane=lane,
            currency=rng.choice(["EUR", "USD"]),
            amount=f"{rng.randrange(4000, 250000):,}.{rng.randrange(100):02d}",
            count=count,
            unit=unit,
            vent=rng.randrange(1, 5),
            broker=rng.choice(BROKERS),
            day=rng.randrange(1, 29),
            month=rng.choice(MONTHS),
            spot=rng.randrange(3, 13),
            wind=rng.randrange(18, 41),
        )

    def record(self, index: int, minute: int, remarks: int) -> Record:
        rng = self.rng
        vessel, imo, agent = rng.choice(VESSELS)
        cargo, hs_code, unit = rng.choice(CARGO)
        reefer = hs_code in PERISHABLE
        size = REEFER if reefer else rng.choice(DRY_SIZES)
        declared = rng.randrange(80, 290) * 100
        weighed = round(declared * rng.uniform(0.955, 1.045))
        lane = rng.choice(LANES)
        driver = rng.choice(DRIVERS)
        officer, badge = rng.choice(OFFICERS)
        set_point = rng.choice([-25.0, -18.0, 2.0, 4.0, 12.0])
        reading = set_point + rng.choice([-0.6, -0.3, 0.0, 0.4, 0.8, 1.5])
        return Record(
            id=f"IR-{24100 + index * 3 + rng.randrange(3)}",
            time=f"{(22 + minute // 60) % 24:02d}:{minute % 60:02d}",
            berth=f"B{rng.randrange(1, 8)}",
            lane=lane,
            vessel=vessel,
            imo=imo,
            voyage=f"{rng.randrange(100, 400)}{rng.choice('NSEW')}",
            agent=agent,
            container=f"{rng.choice(OWNER_CODES)} {next(self.containers)}",
            size=size,
            seal=f"SL-{next(self.seals)}",
            seal_kind=rng.choice(["bolt, intact", "bolt, intact", "cable, intact", "bolt, replaced after exam"]),
            shipper=rng.choice(SHIPPERS),
            consignee=rng.choice(CONSIGNEES),
            cargo=f"{cargo}, {rng.randrange(8, 40)} {unit}",
            hs_code=hs_code,
            origin=rng.choice(ORIGINS),
            destination=rng.choice(DESTINATIONS),
            declared_kg=declared,
            weighed_kg=weighed,
            tare_kg=rng.choice([2200, 2300, 3750, 3900, 4480]),
            reefer=f"set point {set_point:+.1f} C, reading {reading:+.1f} C, plug bank P{rng.randrange(1, 5)}"
            if reefer
            else "n/a",
            scanner=rng.choice(SCANNERS),
            image=f"IMG-{rng.randrange(10000, 100000)}",
            scan_result=CLEAN if rng.random() < 0.7 else rng.choice(ANOMALIES),
            officer=officer,
            badge=badge,
            k9=rng.choice(K9),
            minutes=rng.randrange(6, 48),
            plate=rng.choice(self.plates),
            driver=driver,
            haulier=rng.choice(HAULIERS),
            outcome=rng.choice(OUTCOMES),
            remarks=tuple(self.remark(t, lane, driver) for t in rng.sample(REMARKS, min(remarks, len(REMARKS)))),
        )


def middle_range(records: int, per_batch: int) -> range:
    """The positions of the middle of the night: after the first two batches, before the last 40% of the records
    (the whole night when it is too short for one)."""
    start, end = 2 * per_batch, int(records * 0.6)
    return range(start, end) if end > start else range(records)


def generate_night(rng: random.Random, records: int, per_batch: int, remarks: int, kind: str | None) -> Night:
    """The night's ``records`` records, the question (``kind``, or drawn) and its answer."""
    kind = kind or rng.choice(QUESTION_KINDS)
    draw = _Draw(rng, records)
    minutes = sorted(rng.sample(range(0, 8 * 60), records))
    night = [draw.record(index, minute, remarks) for index, minute in enumerate(minutes)]
    middle = middle_range(records, per_batch)
    planted = _plant(rng, night, kind, middle)
    question = _question(night, kind, planted)
    answer = sorted(r.container for r in night if matches(question, record_fields(r)))
    return Night(night, question, answer)


def _spread(rng: random.Random, count: int, middle: range, total: int) -> list[int]:
    """``count`` distinct positions, the first in ``middle``, the others anywhere."""
    first = rng.choice(list(middle))
    others = rng.sample([p for p in range(total) if p != first], min(count, total) - 1)
    return [first, *others]


def _plant(rng: random.Random, night: list[Record], kind: str, middle: range) -> list[int]:
    """Make the night answer a question of ``kind``: change the fields it asks about; the positions planted."""
    total = len(night)
    if kind == "seal":
        return [rng.choice(list(middle))]
    if kind in ("truck", "shipper"):
        field = "plate" if kind == "truck" else "shipper"
        positions = _spread(rng, PLANTED, middle, total)
        value = getattr(night[positions[0]], field)
        for pos in positions:
            night[pos] = _replace(night[pos], **{field: value})
        return positions
    if kind == "overweight":
        positions = _spread(rng, PLANTED, middle, total)
        for pos in positions:
            declared = night[pos].declared_kg
            night[pos] = _replace(night[pos], weighed_kg=round(declared * rng.uniform(1.06, 1.12)))
        return positions
    positions = _spread(rng, 2, middle, total)  # scanner: two clean images of the asked scanner at least
    scanner = night[positions[0]].scanner
    for pos in positions:
        night[pos] = _replace(night[pos], scanner=scanner, scan_result=CLEAN)
    return positions


def _question(night: list[Record], kind: str, planted: list[int]) -> Question:
    """The question whose answer the planted records make."""
    first = night[planted[0]]
    value = {
        "seal": first.seal,
        "truck": first.plate,
        "shipper": first.shipper,
        "scanner": first.scanner,
        "overweight": "",
    }[kind]
    return Question(kind, value)


def _replace(record: Record, **changes: object) -> Record:
    return Record(**{**vars(record), **changes})


QUESTION_TEXTS = {
    "seal": (
        "Customs intelligence has just told us that seal {value} was cloned. Which container carried seal "
        "{value} tonight? Submit its container number."
    ),
    "truck": (
        "The truck with plate {value} was stopped at the outer gate with paperwork for several boxes. Which "
        "containers did that truck collect tonight? Submit every container number."
    ),
    "scanner": (
        "Scanner {value} was found miscalibrated at 05:40, so its clean images cannot be trusted. Which "
        'containers scanned on {value} tonight came back with the result "no anomalies"? Submit every '
        "container number."
    ),
    "overweight": (
        "The weighbridge audit needs every container whose weighed mass (VGM) tonight was more than 5 percent "
        "above its declared gross weight. Submit every container number."
    ),
    "shipper": (
        "The shipper {value} is under investigation for misdeclared goods. Which containers of that shipper "
        "were inspected tonight? Submit every container number."
    ),
}
QUESTION_PATTERNS = {
    kind: re.compile(re.escape(before) + r"(.+?)" + re.escape(after[:12]) if "{value}" in text else re.escape(text))
    for kind, text in QUESTION_TEXTS.items()
    for before, _, after in [text.partition("{value}")]
}
"""What each question says, its value as group 1 (none for ``overweight``)."""


def question_text(question: Question) -> str:
    """The supervisor's question as ``get_request`` states it."""
    return QUESTION_TEXTS[question.kind].format(value=question.value)


def parse_question(text: str) -> Question | None:
    """The question a text states (``question_text``'s inverse), ``None`` when it states none."""
    for kind, pattern in QUESTION_PATTERNS.items():
        match = pattern.search(text)
        if match:
            return Question(kind, match.group(1) if match.groups() else "")
    return None
