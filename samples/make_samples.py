"""Write the sample workbooks and the sandbox seed (last cycle's live state), deterministically.

    python samples/make_samples.py            # writes next to this file
    python samples/make_samples.py --out DIR  # writes into DIR (tests compare with the committed files)

The workbooks are the 2027 intake as the curriculum and admissions offices would send them, with the
mess such files carry: trailing spaces, a subject code stored as a number, a merged School cell, an
empty row. The seed is institution-a's live state after the 2026 cycle: most records equal to the
source, some renamed or with other custom attributes, some missing, a subject whose `access` differs
(read-only: a warning), a code differing only in case (a near-duplicate warning), an arrangement READY
that the source wants ACTIVE, and tags. Running it twice gives byte-identical files.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import uuid
import zipfile
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Font

HERE = Path(__file__).resolve().parent
FIXED_TIME = datetime(2026, 11, 2, 9, 0, 0)
ZIP_TIME = (2026, 11, 2, 9, 0, 0)
NAMESPACE = uuid.UUID("6f2b8d52-7a55-4c1e-9a3e-2b7f0c1d9e10")

# ---- the 2027 intake (the source) ---------------------------------------------------------------

SCHOOLS = [  # code, name, faculty
    ("SCI", "School of Science", "Faculty of Science"),
    ("ENG", "School of Engineering", "Faculty of Engineering and IT"),
    ("BUS", "School of Business", "Business School"),
    ("HUM", "School of Humanities and Languages", "Faculty of Arts and Social Sciences"),
    ("HLT", "School of Health Sciences", "Faculty of Health"),
]

COURSES = [  # code, title, school, CRICOS, duration, status
    ("BSC", "Bachelor of Science", "SCI", "003097J", "3 years", "Active"),
    ("BADVSC", "Bachelor of Advanced Science (Honours)", "SCI", "079712D", "4 years", "Active"),
    ("BENGH", "Bachelor of Engineering (Honours)", "ENG", "077586M", "4 years", "Active"),
    ("BCOM", "Bachelor of Commerce", "BUS", "000942G", "3 years", "Active"),
    ("BA", "Bachelor of Arts", "HUM", "001232B", "3 years", "Active"),
    ("BHLTH", "Bachelor of Health Science", "HLT", "", "3 years", "Active"),
    ("MDATASC", "Master of Data Science and Innovation", "SCI", "086712F", "2 years", "Active"),
    ("BSCEDU", "Bachelor of Science Education", "SCI", "", "4 years", "Withdrawn"),
]

PROGRAMS = [  # code, name, course
    ("BSC-MATH", "Mathematics major", "BSC"),
    ("BSC-STAT", "Statistics major", "BSC"),
    ("BSC-CHEM", "Chemistry major", "BSC"),
    ("BENGH-CIV", "Civil Engineering major", "BENGH"),
    ("BENGH-SW", "Software Engineering major", "BENGH"),
    ("BCOM-ACC", "Accounting major", "BCOM"),
    ("BCOM-FIN", "Finance major", "BCOM"),
    ("BA-HIST", "History major", "BA"),
    ("BHLTH-NUT", "Nutrition major", "BHLTH"),
    ("MDATASC-ML", "Machine Learning specialisation", "MDATASC"),
]

SUBJECTS = [  # code (a number where the office typed one), name, program, access, credit points, level
    ("MATH1001", "Calculus I  ", "BSC-MATH", "Open", 6, 1),
    ("MATH1002", "Linear Algebra", "BSC-MATH", "Open", 6, 1),
    ("MATH2001", "Real Analysis", "BSC-MATH", "Open", 6, 2),
    ("STAT1001", "Introduction to Statistics", "BSC-STAT", "Open", 6, 1),
    ("STAT2002", "Regression Modelling", "BSC-STAT", "Open", 6, 2),
    None,  # an empty row, as the office leaves them
    ("CHEM1101", "Chemistry 1A", "BSC-CHEM", "Open", 6, 1),
    (48024, "Applications Programming", "BENGH-SW", "Open", 6, 1),
    (48430, "Fundamentals of C Programming", "BENGH-SW", "Open", 6, 1),
    ("CIVL2010", "Structural Mechanics", "BENGH-CIV", "Restricted", 6, 2),
    ("ACCT1001", "Accounting for Business Decisions", "BCOM-ACC", "Open", 6, 1),
    ("FINC2011", "Corporate Finance", "BCOM-FIN", "Open", 6, 2),
    ("HIST1005", "Australian History", "BA-HIST", "Open", 6, 1),
    ("NUTR1001", "Food and Nutrition Science", "BHLTH-NUT", "Open", 6, 1),
    ("DATA5001", "Machine Learning Foundations", "MDATASC-ML", "Restricted", 12, 5),
]

APPLICANTS = [  # external id, first, last, email, birth date, deliveries, citizenship
    ("A1000123", "Olivia", "Nguyen", "olivia.nguyen@example.com", date(2007, 3, 14), "On campus;Online", "Australia"),
    ("A1000124", "Jack", "Williams", "jack.williams@example.com", date(2006, 11, 2), "On campus", "Australia"),
    ("A1000125", "Mia", "Chen", "mia.chen@example.net", date(2005, 7, 21), "Online", "Malaysia"),
    ("A1000126", "Noah", "Patel", "noah.patel@example.org", date(1998, 1, 9), "Online;On campus", "India"),
    ("A1000127", "Charlotte", "Smith", "charlotte.smith@example.com", date(2007, 5, 30), "On campus", "Australia"),
    ("A1000128", "Liam", "O'Brien", "liam.obrien@example.com", date(2004, 9, 17), "On campus", "New Zealand"),
    ("A1000129", "Aisha", "Rahman", "aisha.rahman@example.com", date(2006, 12, 1), "Online", "Bangladesh"),
    ("A1000130", "Lucas", "Rossi", "lucas.rossi@example.com", date(2003, 4, 25), "On campus;Online", "Italy"),
]

CREDENTIALS = [  # applicant, type, name, inst code, inst name, country, completion, result type, result, tags
    ("A1000123", "TERTIARY", "Diploma of Information Technology", "TAFENSW", "TAFE NSW", "Australia",
     date(2026, 11, 30), "GPA", "6.2", ""),
    ("A1000124", "SUBJECT", "HSC Mathematics Extension 1", "NESA", "NSW Education Standards Authority",
     "Australia", None, "", "", ""),
    ("A1000125", "TERTIARY", "Foundation in Science", "TAYLORS", "Taylor's University", "Malaysia",
     date(2026, 6, 30), "Percentage", "78", "International"),
    ("A1000126", "PROFESSIONAL", "Certified Practising Accountant", "CPAAU", "CPA Australia", "Australia",
     None, "", "", "International;Recognition of Prior Learning"),
    ("A1000126", "EMPLOYMENT", "Software Developer", "", "", "", None, "", "", ""),
    ("A1000129", "TERTIARY", "Higher Secondary Certificate", "BISE", "Board of Intermediate and Secondary "
     "Education, Dhaka", "Bangladesh", date(2025, 8, 15), "GPA", "5.0", "International;Scholarship"),
    ("A1000130", "TERTIARY", "Diploma of Engineering", "TAFEVIC", "Melbourne Polytechnic", "Australia",
     date(2026, 12, 10), "GPA", "5.8", "Recognition of Prior Learning"),
]

ARRANGEMENTS = [  # code, title, status (office words), subjects awarded, partner
    ("ART-TAFE-IT", "TAFE NSW Diploma of IT into Bachelor of Engineering (Software)", "Live", "48024;48430",
     "TAFE NSW"),
    ("ART-TAFE-ACC", "TAFE NSW Diploma of Accounting into Bachelor of Commerce", "Live", "ACCT1001", "TAFE NSW"),
    ("ART-DIP-SCI", "Diploma of Science into Bachelor of Science", "Ready", "MATH1001;STAT1001",
     "UTS College"),
    ("ART-CERT-HLTH", "Certificate IV in Health into Bachelor of Health Science", "Live", "NUTR1001",
     "TAFE NSW"),
]

TAGS = ["International", "Scholarship", "Recognition of Prior Learning"]


# ---- workbooks --------------------------------------------------------------------------------


def _sheet(wb: Workbook, title: str, header: Sequence[str], rows: Sequence[Sequence[Any] | None]) -> Any:
    ws = wb.create_sheet(title)
    ws.append(list(header))
    for cell in ws[1]:
        cell.font = Font(bold=True)
    for row in rows:
        ws.append([] if row is None else [None if v == "" else v for v in row])
    for column, name in zip("ABCDEFGHIJKL", header, strict=False):
        ws.column_dimensions[column].width = max(12, len(name) + 4)
    return ws


def _new_workbook() -> Workbook:
    wb = Workbook()
    wb.remove(wb.active)
    wb.properties.creator = "Curriculum Office"
    wb.properties.created = FIXED_TIME
    return wb


def curriculum_workbook() -> Workbook:
    wb = _new_workbook()
    _sheet(wb, "Schools", ["School Code", "School Name", "Faculty"], SCHOOLS)
    courses = _sheet(
        wb,
        "Courses",
        ["Course Code", "Course Title", "School Code", "CRICOS Code", "Duration", "Status"],
        COURSES,
    )
    # BSC and BADVSC share a School cell merged over both rows, as offices format them.
    courses.merge_cells("C2:C3")
    _sheet(wb, "Programs", ["Program Code", "Program Name", "Course Code"], PROGRAMS)
    subjects = _sheet(
        wb, "Subjects", ["Subject Code", "Subject Name", "Program Code", "Access", "Credit Points", "Level"], SUBJECTS
    )
    subjects["C3"] = " BSC-MATH "  # a stray space around a code
    return wb


def applicants_workbook() -> Workbook:
    wb = _new_workbook()
    ws = _sheet(
        wb,
        "Applicants",
        ["Applicant ID", "First Name", "Last Name", "Email", "Date of Birth", "Eligible Deliveries", "Citizenship"],
        APPLICANTS,
    )
    for (cell,) in ws.iter_rows(min_row=2, min_col=5, max_col=5):
        cell.number_format = "DD/MM/YYYY"
    ws = _sheet(
        wb,
        "Credentials",
        ["Applicant ID", "Credential Type", "Credential Name", "Institution Code", "Institution Name", "Country",
         "Completion Date", "Result Type", "Result", "Tags"],
        CREDENTIALS,
    )
    for (cell,) in ws.iter_rows(min_row=2, min_col=7, max_col=7):
        cell.number_format = "DD/MM/YYYY"
    return wb


def arrangements_workbook() -> Workbook:
    wb = _new_workbook()
    _sheet(wb, "Arrangements", ["Arrangement Code", "Title", "Status", "Subjects Awarded", "Partner"], ARRANGEMENTS)
    return wb


def _deterministic_bytes(wb: Workbook) -> bytes:
    """The workbook's bytes without the save time openpyxl stamps into the zip and docProps."""
    raw = io.BytesIO()
    wb.save(raw)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw.getvalue())) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                data = re.sub(
                    rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)",
                    rb"\g<1>" + FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ").encode() + rb"\g<2>",
                    data,
                )
            dst.writestr(zipfile.ZipInfo(info.filename, date_time=ZIP_TIME), data, zipfile.ZIP_DEFLATED)
    return out.getvalue()


# ---- the shapes staff really send (contract section 4.1; mappings/real-world/) -----------------

OFFERINGS = [  # subject code (a number where the system exports one), title, program, campus, faculty code,
    # subject status, offering status — one row per offering, as the curriculum system exports them
    ("MATH1001", "Calculus I", "BSC-MATH", "City", 851, "Active", "Open"),
    ("MATH1001", "Calculus I", "BSC-MATH", "Online", 851, "Active", "Open"),
    ("STAT1001", "Introduction to Statistics", "BSC-STAT", "City", 851, "Active", "Open"),
    (48024, "Applications Programming", "BENGH-SW", "City", 852, "Active", "Open"),
    ("48024", "Applications Programming", "BENGH-SW", "Online", 852, "Active", "Waitlist"),
    (48024, "Applications Programming", "BENGH-SW", "Albury", 852, "Active", "Closed"),
    ("ACCT1001", "Accounting for Business Decisions", "BCOM-ACC", "City", 853, "Active", "Open"),
    ("NUTR1001", "Food and Nutrition Science", "BHLTH-NUT", "Online", 855, "Active", "Open"),
    ("NUTR1001", "Food and Nutrition Science", "BHLTH-NUT", "City", 855, "Active", "Open"),
]

FACULTIES = [("0851", "Faculty of Science"), ("0852", "Faculty of Engineering and IT"),
             ("0853", "Business School"), ("0854", "Faculty of Arts and Social Sciences"),
             ("0855", "Faculty of Health")]

QUALIFICATIONS: dict[str, list[tuple[Any, ...]]] = {  # applicant -> up to three groups of
    # type (as the CRM words it), name, institution code, institution, country, completed, result type, result
    "A1000123": [("Tertiary", "Diploma of Information Technology", "TAFENSW", "TAFE NSW", "Australia",
                  "30/11/2026", "GPA", "6.2")],
    "A1000124": [("Subject", "HSC Mathematics Extension 1", "NESA", "NSW Education Standards Authority",
                  "Australia", None, None, None),
                 ("Employment", "Barista", None, None, None, None, None, None)],
    "A1000125": [("Tertiary", "Foundation in Science", "TAYLORS", "Taylor's University", "Malaysia",
                  46203, "Percentage", "78")],  # a date typed into a General cell: an Excel serial number
    "A1000126": [("Professional", "Certified Practising Accountant", "CPAAU", "CPA Australia", "Australia",
                  None, None, None),
                 ("Employment", "Software Developer", None, None, None, None, None, None),
                 ("Tertiary", "Graduate Certificate in Data Science", "UTS", "University of Technology Sydney",
                  "Australia", "30 Jun 2025", "GPA", "6.5")],
    "A1000130": [("Tertiary", "Diploma of Engineering", "TAFEVIC", "Melbourne Polytechnic", "Australia",
                  date(2026, 12, 10), "GPA", "5.8")],
}

LEGACY_APPLICANTS = [  # from a legacy student system: Windows-1252 text, `;` between fields, dd.mm.yyyy
    ("L-000451", "Renée", "Dubois", "renee.dubois@example.fr", "14.03.2006", "France"),
    ("L-000452", "Jürgen", "Müller", "juergen.mueller@example.de", "02.11.2005", "Germany"),
    ("L-000453", "Iñaki", "Etxeberria", "inaki.e@example.es", "21.07.2004", "Spain"),
    ("L-000454", "Siobhán", "O’Neill", "siobhan.oneill@example.ie", "30.05.2007", "Ireland"),
]


def offerings_workbook() -> Workbook:
    """A flat curriculum export: a title row and an export note above the header, one row per offering."""
    wb = _new_workbook()
    ws = wb.create_sheet("Offerings 2027")
    ws.append(["Subject offerings — Intake 2027"])
    ws.merge_cells("A1:G1")
    ws["A1"].font = Font(bold=True, size=14)
    ws.append(["Exported from the curriculum system on 02/11/2026"])
    ws.append([])
    ws.append(["Subject Code", "Subject Title", "Program", "Campus", "Faculty Code", "Status", "Status"])
    for cell in ws[4]:
        cell.font = Font(bold=True)
    for row in OFFERINGS:
        ws.append(list(row))
    faculties = wb.create_sheet("Faculties")
    faculties.append(["Code", "Faculty Name"])
    for row in FACULTIES:
        faculties.append(list(row))
    return wb


def applicant_export_workbook() -> Workbook:
    """An applicant export from the CRM: one row per applicant, up to three qualification groups."""
    wb = _new_workbook()
    ws = wb.create_sheet("Applicants 2027")
    ws.append(["Applicant export — Intake 2027 (confidential)"])
    ws.merge_cells("A1:F1")
    ws.append([])
    group = ["Type", "Name", "Institution Code", "Institution", "Country", "Completed", "Result Type", "Result"]
    ws.append(["Student ID", *(f"Qual {n} {part}" for n in (1, 2, 3) for part in group)])
    for student, held in QUALIFICATIONS.items():
        row: list[Any] = [student]
        for qual in held:
            row += list(qual)
        ws.append(row)
    return wb


HANDBOOK = [  # the handbook system's export: faculty and department by name only (no codes the service
    # could use), credit points as numbers, requisites as lists in one cell (commas, or Alt+Enter lines)
    ("Faculty of Science", "Mathematical Sciences", "MATH2101", "Linear Algebra", 6, "MATH1001", 2),
    ("Faculty of Science", "Mathematical Sciences", "MATH2102", "Real Analysis", 6, "MATH1001\nMATH2101", 2),
    ("Faculty of Science", "Statistics", "STAT2101", "Regression Modelling", 7.5, "STAT1001, MATH1001", 2),
    ("Faculty of Health", "Nutrition and Dietetics", "NUTR2101", "Clinical Nutrition", 12.5, "NUTR1001", 2),
    ("Faculty of Health", "Nutrition and Dietetics", "NUTR3101", "Nutrition Research Project", 25, None, 3),
]


def handbook_workbook() -> Workbook:
    """A handbook export that lacks what the service needs: codes for faculties and departments."""
    wb = _new_workbook()
    _sheet(wb, "Handbook 2027", ["Faculty", "Department", "Subject Code", "Subject Title", "Credit Points",
                                 "Prerequisites", "Level"], HANDBOOK)
    return wb


def legacy_csv() -> bytes:
    lines = ["Student No;Given Names;Surname;E-Mail;Born;Citizenship"]
    lines += [";".join(row) for row in LEGACY_APPLICANTS]
    return ("\r\n".join(lines) + "\r\n").encode("cp1252")


# ---- last cycle's live state (the sandbox seed) -------------------------------------------------


def _id(kind: str, key: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{kind}:{key}"))


def _metadata(day: int) -> dict[str, Any]:
    user = {"id": _id("user", "curriculum.office"), "email_address": "curriculum.office@example.edu.au",
            "first_name": "Curriculum", "last_name": "Office"}
    created = int(datetime(2026, 2, day, 10, 30, tzinfo=UTC).timestamp() * 1000)
    return {"created": {"time": created, "user": user}, "updated": {"time": created + 3_600_000, "user": user}}


def seed() -> dict[str, Any]:
    """institution-a as the 2026 cycle left it, and a little of institution-b."""
    schools = []
    for n, (code, name, faculty) in enumerate(SCHOOLS):
        if code == "HLT":
            continue  # a new school this cycle
        attrs = {"Faculty": faculty}
        if code == "ENG":
            name = "Faculty of Engineering"  # renamed this cycle
        if code == "SCI":
            attrs["Legacy ID"] = "S-0042"  # a label the mapping does not manage: kept
        schools.append({"id": _id("school", code), "code": code, "name": name, "custom_attributes": attrs,
                        "metadata": _metadata(n + 1)})
    courses = []
    for n, (code, title, school, cricos, duration, _status) in enumerate(COURSES):
        if code in {"BHLTH", "MDATASC"}:
            continue  # new courses this cycle
        attrs = {"CRICOS": cricos, "Duration": duration} if cricos else {"Duration": duration}
        if code == "BCOM":
            attrs["CRICOS"] = "000942F"  # corrected this cycle
        courses.append({"id": _id("course", code), "code": code, "name": title,
                        "parent": {"id": _id("school", school)}, "custom_attributes": attrs,
                        "metadata": _metadata(n + 6)})
    courses.append({"id": _id("course", "BTEACH"), "code": "BTEACH", "name": "Bachelor of Teaching",
                    "parent": {"id": _id("school", "HUM")}, "custom_attributes": {"Duration": "4 years"},
                    "metadata": _metadata(14)})
    programs = []
    for n, (code, name, course) in enumerate(PROGRAMS):
        if course in {"BHLTH", "MDATASC"}:
            continue
        if code == "BA-HIST":
            name = "History"  # renamed this cycle
        programs.append({"id": _id("program", code), "code": code, "name": name,
                         "parent": {"id": _id("course", course)}, "metadata": _metadata(n + 15)})
    subjects = []
    for n, row in enumerate(r for r in SUBJECTS if r is not None):
        code, name, program, access, points, level = row
        code = str(code)
        if code in {"STAT1001", "NUTR1001", "DATA5001"}:
            continue
        if code == "MATH2001":
            access = "Restricted"  # can only be set at creation: a warning, never an update
        if code == "FINC2011":
            name = "Corporate Finance I"
        subjects.append({"id": _id("subject", code), "code": code, "name": name.strip(),
                         "parent": {"id": _id("program", program.strip())}, "access": access,
                         "custom_attributes": {"Credit Points": str(points), "Level": str(level)},
                         "metadata": _metadata(n + 1)})
    # Entered by hand last cycle in lower case: the source's STAT1001 is a near-duplicate of it.
    subjects.append({"id": _id("subject", "stat1001"), "code": "stat1001", "name": "Intro to Statistics",
                     "parent": {"id": _id("program", "BSC-STAT")}, "access": "Open",
                     "custom_attributes": {"Credit Points": "6", "Level": "1"}, "metadata": _metadata(20)})
    tags = [{"id": _id("tag", t), "name": t} for t in TAGS]
    applicants = []
    for n, (ext, first, last, email, born, deliveries, country) in enumerate(APPLICANTS):
        if ext in {"A1000129", "A1000130"}:
            continue  # applied this cycle
        if ext == "A1000125":
            email = "mia.chen@example.com"  # changed address
        applicants.append({"id": _id("applicant", ext), "external_id": ext, "first_name": first, "last_name": last,
                           "email_address": email, "date_of_birth": born.isoformat(),
                           "eligible_deliveries": sorted(deliveries.split(";"), reverse=True),
                           "custom_attributes": {"Citizenship": country}, "metadata": _metadata(n + 1)})
    credentials = []
    for n, (ext, ctype, name, icode, iname, country, done, rtype, result, tag_names) in enumerate(CREDENTIALS):
        if ext in {"A1000129", "A1000130"}:
            continue
        record: dict[str, Any] = {"id": _id("credential", f"{ext}/{ctype}/{name}"),
                                  "applicant_id": _id("applicant", ext), "type": ctype, "name": name,
                                  "metadata": _metadata(n + 1)}
        if icode:
            record.update(institutionCode=icode, institutionName=iname, country=country)
        if done:
            record.update(completionDate=done.isoformat(), resultType=rtype, result=result)
        if ext == "A1000123":
            record["result"] = "6.0"  # the final result came in this cycle
        record["tags"] = [_id("tag", t) for t in tag_names.split(";")] if tag_names else []
        credentials.append(record)
    arrangements = []
    live_status = {"ART-TAFE-IT": "READY", "ART-TAFE-ACC": "ACTIVE"}
    for n, (code, title, _status, awarded, _partner) in enumerate(ARRANGEMENTS):
        if code not in live_status:
            continue
        arrangements.append({"id": _id("arrangement", code), "code": code, "name": title, "status": live_status[code],
                             "subjects_awarded": [_id("subject", s) for s in awarded.split(";")],
                             "metadata": _metadata(n + 1)})
    other = {
        "schools": [{"id": _id("b-school", "SCI"), "code": "SCI", "name": "Faculty of Science (Institution B)",
                     "custom_attributes": {}}],
        "tags": [{"id": _id("b-tag", "International"), "name": "International"}],
    }
    return {
        "institution-a": {"schools": schools, "courses": courses, "programs": programs, "subjects": subjects,
                          "tags": tags, "applicants": applicants, "credentials": credentials,
                          "arrangements": arrangements, "applications": [], "suggestions": [], "users": [],
                          "roles": []},
        "institution-b": other,
    }


def write_all(out: Path) -> list[Path]:
    """Write every sample file under `out`; returns the paths written."""
    intake = out / "intake-2027"
    intake.mkdir(parents=True, exist_ok=True)
    written = []
    for name, wb in (("curriculum.xlsx", curriculum_workbook()), ("applicants.xlsx", applicants_workbook()),
                     ("arrangements.xlsx", arrangements_workbook())):
        path = intake / name
        path.write_bytes(_deterministic_bytes(wb))
        written.append(path)
    shapes = out / "real-world"
    shapes.mkdir(parents=True, exist_ok=True)
    for name, wb in (("offerings-export.xlsx", offerings_workbook()),
                     ("applicant-export.xlsx", applicant_export_workbook()),
                     ("handbook-export.xlsx", handbook_workbook())):
        path = shapes / name
        path.write_bytes(_deterministic_bytes(wb))
        written.append(path)
    legacy = shapes / "legacy-applicants.csv"
    legacy.write_bytes(legacy_csv())
    written.append(legacy)
    seed_path = out / "sandbox-seed.json"
    seed_path.write_text(json.dumps(seed(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(seed_path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="directory to write into (default: samples/)")
    args = parser.parse_args(argv)
    for path in write_all(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
