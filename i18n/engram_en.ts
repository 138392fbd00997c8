<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>ApprovalDialog</name>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="55"/>
        <source>Allow the agent to do this?</source>
        <translation>Allow the agent to do this?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="60"/>
        <source>The agent wants to run a command in %1:</source>
        <translation>The agent wants to run a command in %1:</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="62"/>
        <source>The agent wants to edit %1:</source>
        <translation>The agent wants to edit %1:</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="65"/>
        <source>The agent wants to write %1:</source>
        <translation>The agent wants to write %1:</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="71"/>
        <source>Allow &amp;once</source>
        <translation>Allow &amp;once</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="72"/>
        <source>Allow &amp;always this session</source>
        <translation>Allow &amp;always this session</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/approval.py" line="73"/>
        <source>&amp;Deny</source>
        <translation>&amp;Deny</translation>
    </message>
</context>
<context>
    <name>AskMemory</name>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="38"/>
        <source>Ask what the project&apos;s memory knows, e.g. “how do we run migrations?”</source>
        <translation>Ask what the project&apos;s memory knows, e.g. “how do we run migrations?”</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="40"/>
        <source>As&amp;k</source>
        <translation>As&amp;k</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="63"/>
        <source>Searching memory…</source>
        <translation>Searching memory…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="82"/>
        <source>No language model is set up, so here are the memories that answer best, ranked, with their citations. Choose a model in Settings for written answers.</source>
        <translation>No language model is set up, so here are the memories that answer best, ranked, with their citations. Choose a model in Settings for written answers.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="88"/>
        <source>Memory has nothing on this yet.</source>
        <translation>Memory has nothing on this yet.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/ask.py" line="89"/>
        <source>score</source>
        <translation>score</translation>
    </message>
</context>
<context>
    <name>AuditActions</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="65"/>
        <source>added</source>
        <translation>added</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="66"/>
        <source>edited</source>
        <translation>edited</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="67"/>
        <source>pinned</source>
        <translation>pinned</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="68"/>
        <source>unpinned</source>
        <translation>unpinned</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="69"/>
        <source>confirmed</source>
        <translation>confirmed</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="70"/>
        <source>deprecated</source>
        <translation>deprecated</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="71"/>
        <source>forgotten</source>
        <translation>forgotten</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="72"/>
        <source>restored</source>
        <translation>restored</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="73"/>
        <source>deleted</source>
        <translation>deleted</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="74"/>
        <source>promoted</source>
        <translation>promoted</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="75"/>
        <source>evicted</source>
        <translation>evicted</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="76"/>
        <source>reinforced</source>
        <translation>reinforced</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="77"/>
        <source>marked stale</source>
        <translation>marked stale</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="78"/>
        <source>sent to review</source>
        <translation>sent to review</translation>
    </message>
</context>
<context>
    <name>CitationBar</name>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="201"/>
        <source>Hide memories</source>
        <translation>Hide memories</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/session/citations.py" line="202"/>
        <source>Used %n memories</source>
        <translation>
            <numerusform>Used %n memory</numerusform>
            <numerusform>Used %n memories</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="203"/>
        <source>Show every memory this answer cited</source>
        <translation>Show every memory this answer cited</translation>
    </message>
</context>
<context>
    <name>CitationChip</name>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="117"/>
        <source>Open memory #%1</source>
        <translation>Open memory #%1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="121"/>
        <source>This memory is wrong — correct it</source>
        <translation>This memory is wrong — correct it</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="122"/>
        <source>Flag memory #%1 as wrong</source>
        <translation>Flag memory #%1 as wrong</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="124"/>
        <source>Dead end: an approach tried before and abandoned</source>
        <translation>Dead end: an approach tried before and abandoned</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="125"/>
        <source>Memory the agent used</source>
        <translation>Memory the agent used</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/citations.py" line="126"/>
        <source>Shared by %1</source>
        <translation>Shared by %1</translation>
    </message>
</context>
<context>
    <name>Closing</name>
    <message>
        <location filename="../desktop/ui/closing.py" line="27"/>
        <source>stopping the agent session</source>
        <translation>stopping the agent session</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="28"/>
        <source>finishing background work</source>
        <translation>finishing background work</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="29"/>
        <source>stopping the code graph</source>
        <translation>stopping the code graph</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="30"/>
        <source>stopping the search indexer</source>
        <translation>stopping the search indexer</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="31"/>
        <location filename="../desktop/ui/closing.py" line="32"/>
        <source>saving what the observer learned</source>
        <translation>saving what the observer learned</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="33"/>
        <source>checking new memories for conflicts</source>
        <translation>checking new memories for conflicts</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="34"/>
        <source>anchoring new memories</source>
        <translation>anchoring new memories</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="35"/>
        <source>writing the last changes</source>
        <translation>writing the last changes</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="37"/>
        <source>stopping background work</source>
        <translation>stopping background work</translation>
    </message>
    <message>
        <location filename="../desktop/ui/closing.py" line="101"/>
        <source>Closing %1: %2…</source>
        <translation>Closing %1: %2…</translation>
    </message>
</context>
<context>
    <name>ConflictCard</name>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="34"/>
        <source>Older</source>
        <translation>Older</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="34"/>
        <source>Newer</source>
        <translation>Newer</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="41"/>
        <source>Keep &amp;new</source>
        <translation>Keep &amp;new</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="41"/>
        <source>The newer memory replaces the older one</source>
        <translation>The newer memory replaces the older one</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="42"/>
        <source>Keep &amp;old</source>
        <translation>Keep &amp;old</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="42"/>
        <source>The older memory stays; the newer one is retired</source>
        <translation>The older memory stays; the newer one is retired</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="43"/>
        <source>Keep &amp;both</source>
        <translation>Keep &amp;both</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="43"/>
        <source>Both are right (for different cases)</source>
        <translation>Both are right (for different cases)</translation>
    </message>
</context>
<context>
    <name>ConflictsDialog</name>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="59"/>
        <source>Conflicting memories</source>
        <translation>Conflicting memories</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/conflicts.py" line="64"/>
        <source>No conflicting memories. Nothing to decide.</source>
        <translation>No conflicting memories. Nothing to decide.</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/dialogs/conflicts.py" line="89"/>
        <source>%n pairs of memories disagree. For each, decide which one agents should believe.</source>
        <translation>
            <numerusform>%n pair of memories disagrees. Decide which one agents should believe.</numerusform>
            <numerusform>%n pairs of memories disagree. For each, decide which one agents should believe.</numerusform>
        </translation>
    </message>
    <message>
        <source>Two memories disagree. Decide which one agents should believe.</source>
        <translation type="vanished">Two memories disagree. Decide which one agents should believe.</translation>
    </message>
</context>
<context>
    <name>CorrectionDialog</name>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="27"/>
        <source>&amp;Outdated — we fixed this</source>
        <translation>&amp;Outdated — we fixed this</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="28"/>
        <source>The memory is retired. If you describe how it is now, that becomes a new memory that replaces it.</source>
        <translation>The memory is retired. If you describe how it is now, that becomes a new memory that replaces it.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="30"/>
        <source>&amp;Partially wrong — let me refine it</source>
        <translation>&amp;Partially wrong — let me refine it</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="31"/>
        <source>Edit the text below. The memory keeps its history, so the old version stays visible.</source>
        <translation>Edit the text below. The memory keeps its history, so the old version stays visible.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="33"/>
        <source>&amp;Doesn&apos;t apply to this project</source>
        <translation>&amp;Doesn&apos;t apply to this project</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="34"/>
        <source>The memory is marked not applicable and is never given to agents in this project again.</source>
        <translation>The memory is marked not applicable and is never given to agents in this project again.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="36"/>
        <source>&amp;Incorrect information</source>
        <translation>&amp;Incorrect information</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="37"/>
        <source>The memory is retired and your correction (required) replaces it.</source>
        <translation>The memory is retired and your correction (required) replaces it.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="47"/>
        <source>Correct memory #%1</source>
        <translation>Correct memory #%1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="55"/>
        <source>What is wrong with this memory?</source>
        <translation>What is wrong with this memory?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="72"/>
        <source>Apply correction</source>
        <translation>Apply correction</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="96"/>
        <source>How is it now? (optional)</source>
        <translation>How is it now? (optional)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/correction.py" line="99"/>
        <source>What is correct? (required)</source>
        <translation>What is correct? (required)</translation>
    </message>
</context>
<context>
    <name>Dashboard</name>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="37"/>
        <source>unknown</source>
        <translation>unknown</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="38"/>
        <source>shallow</source>
        <translation>shallow</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="39"/>
        <source>partial</source>
        <translation>partial</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="40"/>
        <source>mapped</source>
        <translation>mapped</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="86"/>
        <source>memories</source>
        <translation>memories</translation>
    </message>
    <message>
        <source>Everything agents may be given (forgotten ones excluded)</source>
        <translation type="vanished">Everything agents may be given (forgotten ones excluded)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="88"/>
        <source>active in the last 30 days</source>
        <translation>active in the last 30 days</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="88"/>
        <source>Used or created in the last 30 days</source>
        <translation>Used or created in the last 30 days</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="89"/>
        <source>need review</source>
        <translation>need review</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="89"/>
        <source>New or flagged memories waiting for your OK</source>
        <translation>New or flagged memories waiting for your OK</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="90"/>
        <source>steps per session, with / without memory</source>
        <translation>steps per session, with / without memory</translation>
    </message>
    <message>
        <source>Measured on finished sessions of Engram&apos;s agent: the A/B control group gets no memory</source>
        <translation type="vanished">Measured on finished sessions of Engram&apos;s agent: the A/B control group gets no memory</translation>
    </message>
    <message>
        <source>Health score: average confidence × module coverage × review activity</source>
        <translation type="vanished">Health score: average confidence × module coverage × review activity</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="86"/>
        <source>What was taught, imported and learned (forgotten ones and the code index excluded)</source>
        <translation>What was taught, imported and learned (forgotten ones and the code index excluded)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="91"/>
        <source>Measured on finished sessions of Engram&apos;s agent: the A/B control group, chosen at random, gets no memory</source>
        <translation>Measured on finished sessions of Engram&apos;s agent: the A/B control group, chosen at random, gets no memory</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="97"/>
        <source>How much agents can rely on this memory: how confident its memories are, how many modules they cover, and how little waits for your review. The lines beside it say what would raise it.</source>
        <translation>How much agents can rely on this memory: how confident its memories are, how many modules they cover, and how little waits for your review. The lines beside it say what would raise it.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="106"/>
        <source>Memories added per day over the last two weeks</source>
        <translation>Memories added per day over the last two weeks</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="127"/>
        <source>Added per day</source>
        <translation>Added per day</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="127"/>
        <source>By type</source>
        <translation>By type</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="128"/>
        <source>Module coverage</source>
        <translation>Module coverage</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="129"/>
        <source>Needs attention</source>
        <translation>Needs attention</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="129"/>
        <source>Recent activity</source>
        <translation>Recent activity</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="181"/>
        <source>Not enough sessions yet</source>
        <translation>Not enough sessions yet</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="182"/>
        <source>Not measured yet: %1 sessions with memory and %2 without have finished; %3 of each are needed.</source>
        <translation>Not measured yet: %1 sessions with memory and %2 without have finished; %3 of each are needed.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="187"/>
        <source>a difference beyond chance</source>
        <translation>a difference beyond chance</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="188"/>
        <source>no difference distinguishable from chance</source>
        <translation>no difference distinguishable from chance</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="189"/>
        <source>n = %1 / %2 · p = %3: %4</source>
        <translation>n = %1 / %2 · p = %3: %4</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="191"/>
        <source>Mean steps of finished sessions: %1 with memory (n=%2), %3 without (n=%4). A permutation test of the two groups gives p = %5.</source>
        <translation>Mean steps of finished sessions: %1 with memory (n=%2), %3 without (n=%4). A permutation test of the two groups gives p = %5.</translation>
    </message>
    <message>
        <source>Mean steps of finished sessions: %1 with memory (n=%2), %3 without (n=%4).</source>
        <translation type="vanished">Mean steps of finished sessions: %1 with memory (n=%2), %3 without (n=%4).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="205"/>
        <source>Health %1 / 100</source>
        <translation>Health %1 / 100</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="207"/>
        <source>Memories are %1 % confident on average.</source>
        <translation>Memories are %1 % confident on average.</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/dashboard.py" line="209"/>
        <source>%1 of %n modules have a memory about them.</source>
        <translation>
            <numerusform>%1 of %n module has a memory about it.</numerusform>
            <numerusform>%1 of %n modules have a memory about them.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/dashboard.py" line="212"/>
        <source>%n memories wait for your review.</source>
        <translation>
            <numerusform>%n memory waits for your review.</numerusform>
            <numerusform>%n memories wait for your review.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="213"/>
        <source>Nothing waits for your review.</source>
        <translation>Nothing waits for your review.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="215"/>
        <source>No memories yet: teach one, import your rule files, or run an agent.</source>
        <translation>No memories yet: teach one, import your rule files, or run an agent.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="218"/>
        <source>%1 pinned · %2 stale</source>
        <translation>%1 pinned · %2 stale</translation>
    </message>
    <message>
        <source>Average confidence %1 · %2 stale · %3 pinned</source>
        <translation type="vanished">Average confidence %1 · %2 stale · %3 pinned</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="225"/>
        <source>(project root)</source>
        <translation>(project root)</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/dashboard.py" line="226"/>
        <source>%n memories</source>
        <translation>
            <numerusform>%n memory</numerusform>
            <numerusform>%n memories</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="230"/>
        <source>Module coverage appears once the code is indexed.</source>
        <translation>Module coverage appears once the code is indexed.</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/dashboard.py" line="232"/>
        <source>No memory is about a particular module yet (%n modules indexed). Memories about files, taught or learned from sessions, fill this in.</source>
        <translation>
            <numerusform>No memory is about a particular module yet (%n module indexed). Memories about files, taught or learned from sessions, fill this in.</numerusform>
            <numerusform>No memory is about a particular module yet (%n modules indexed). Memories about files, taught or learned from sessions, fill this in.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/dashboard.py" line="235"/>
        <source>%n other modules have no memory yet.</source>
        <translation>
            <numerusform>%n other module has no memory yet.</numerusform>
            <numerusform>%n other modules have no memory yet.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="242"/>
        <source>stale</source>
        <translation>stale</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="242"/>
        <source>needs review</source>
        <translation>needs review</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="247"/>
        <source>Nothing needs your attention.</source>
        <translation>Nothing needs your attention.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="250"/>
        <source>you</source>
        <translation>you</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="250"/>
        <source>an agent</source>
        <translation>an agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/dashboard.py" line="250"/>
        <source>an import</source>
        <translation>an import</translation>
    </message>
</context>
<context>
    <name>ExternalSessions</name>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="73"/>
        <source>No external session yet. Install Engram&apos;s hooks in your agent, then start a session in this project: what Engram tells it appears here.</source>
        <translation>No external session yet. Install Engram&apos;s hooks in your agent, then start a session in this project: what Engram tells it appears here.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="107"/>
        <location filename="../desktop/ui/panel/external.py" line="123"/>
        <source>Hooks installed in %1</source>
        <translation>Hooks installed in %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="107"/>
        <source>Install hooks in %1</source>
        <translation>Install hooks in %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="124"/>
        <source>Engram&apos;s hooks were added to %1</source>
        <translation>Engram&apos;s hooks were added to %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="149"/>
        <source>No warning has been said at a tool call yet.</source>
        <translation>No warning has been said at a tool call yet.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="151"/>
        <source>Warnings at a tool call (before it, or after a check passed): %1 in %2 sessions. Avoided %3, repeated %4, still open %5.</source>
        <translation>Warnings at a tool call (before it, or after a check passed): %1 in %2 sessions. Avoided %3, repeated %4, still open %5.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="157"/>
        <source>Declined by the user: %1 (they would not let run the command a warning recommended).</source>
        <translation>Declined by the user: %1 (they would not let run the command a warning recommended).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="161"/>
        <source>Avoided in %1 of %2 decided (95% interval %3–%4 %); no comparison group.</source>
        <translation>Avoided in %1 of %2 decided (95% interval %3–%4 %); no comparison group.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="168"/>
        <source>Engram&apos;s agent</source>
        <translation>Engram&apos;s agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="169"/>
        <source>%1: warned %2, avoided %3, repeated %4</source>
        <translation>%1: warned %2, avoided %3, repeated %4</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="174"/>
        <source>By agent: %1.</source>
        <translation>By agent: %1.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="192"/>
        <source>%1 · %2
%3 shown, %4 cited, %5 flagged</source>
        <translation>%1 · %2
%3 shown, %4 cited, %5 flagged</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="221"/>
        <source>Session start</source>
        <translation>Session start</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="221"/>
        <source>After compaction</source>
        <translation>After compaction</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="222"/>
        <source>On resume</source>
        <translation>On resume</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="222"/>
        <source>Prompt: %1</source>
        <translation>Prompt: %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="223"/>
        <source>After %1</source>
        <translation>After %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="223"/>
        <source>Before %1</source>
        <translation>Before %1</translation>
    </message>
    <message>
        <source>After opening %1</source>
        <translation type="vanished">After opening %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="224"/>
        <source>Cited without being shown</source>
        <translation>Cited without being shown</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="224"/>
        <source>After %1 failed</source>
        <translation>After %1 failed</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="247"/>
        <source>(deleted)</source>
        <translation>(deleted)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="248"/>
        <source>cited</source>
        <translation>cited</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/external.py" line="248"/>
        <source>flagged</source>
        <translation>flagged</translation>
    </message>
</context>
<context>
    <name>Flows</name>
    <message>
        <location filename="../desktop/ui/flows.py" line="54"/>
        <source>Not saved</source>
        <translation>Not saved</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="92"/>
        <source>Memory saved</source>
        <translation>Memory saved</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="98"/>
        <source>Remembered: %1</source>
        <translation>Remembered: %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="114"/>
        <source>Correction saved</source>
        <translation>Correction saved</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="144"/>
        <source>Session finished. Its summary is in View ▸ Last Session Summary.</source>
        <translation>Session finished. Its summary is in View ▸ Last Session Summary.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="151"/>
        <source>No session has finished yet.</source>
        <translation>No session has finished yet.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="190"/>
        <source>Conflict resolved</source>
        <translation>Conflict resolved</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="207"/>
        <source>Nothing waits for review.</source>
        <translation>Nothing waits for review.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="246"/>
        <source>API key saved in the system keyring</source>
        <translation>API key saved in the system keyring</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/flows.py" line="269"/>
        <source>%n memories exported</source>
        <translation>
            <numerusform>%n memory exported</numerusform>
            <numerusform>%n memories exported</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="276"/>
        <source>Importing %1…</source>
        <translation>Importing %1…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="280"/>
        <source>Imported %1 new, %2 already known, %3 rejected</source>
        <translation>Imported %1 new, %2 already known, %3 rejected</translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="284"/>
        <source>Some lines were not imported</source>
        <translation>Some lines were not imported</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/flows.py" line="285"/>
        <source>%n line(s) rejected; line %1: %2</source>
        <translation>
            <numerusform>%n line rejected; line %1: %2</numerusform>
            <numerusform>%n line(s) rejected; line %1: %2</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/flows.py" line="289"/>
        <source>Not imported</source>
        <translation>Not imported</translation>
    </message>
    <message numerus="yes">
        <source>%n memories imported</source>
        <translation type="vanished">
            <numerusform>%n memory imported</numerusform>
            <numerusform>%n memories imported</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/flows.py" line="296"/>
        <source>%n memories deleted</source>
        <translation>
            <numerusform>%n memory deleted</numerusform>
            <numerusform>%n memories deleted</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>HooksChooser</name>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="55"/>
        <source>Give your coding agents Engram&apos;s memory</source>
        <extracomment>(agent, found on PATH, installed for the project)</extracomment>
        <translation>Give your coding agents Engram&apos;s memory</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="59"/>
        <source>Engram adds hooks to these agents&apos; settings for this project, so they are told what Engram remembers when a session starts and as they work. You can remove them at any time in Settings.</source>
        <translation>Engram adds hooks to these agents&apos; settings for this project, so they are told what Engram remembers when a session starts and as they work. You can remove them at any time in Settings.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="75"/>
        <source>%1 (hooks already installed)</source>
        <translation>%1 (hooks already installed)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="98"/>
        <source>Engram&apos;s hooks were installed for %1</source>
        <translation>Engram&apos;s hooks were installed for %1</translation>
    </message>
</context>
<context>
    <name>HooksPanel</name>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="116"/>
        <source>Hooks let Claude Code, Codex and Gemini CLI receive Engram&apos;s memory in this project when a session starts, when you type a prompt and when they open a file.</source>
        <translation>Hooks let Claude Code, Codex and Gemini CLI receive Engram&apos;s memory in this project when a session starts, when you type a prompt and when they open a file.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="120"/>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="163"/>
        <source>Looking for agents…</source>
        <translation>Looking for agents…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="144"/>
        <source>&amp;Install</source>
        <translation>&amp;Install</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="147"/>
        <source>&amp;Remove</source>
        <translation>&amp;Remove</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="157"/>
        <source>Installed for this project</source>
        <translation>Installed for this project</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="157"/>
        <source>Not installed</source>
        <translation>Not installed</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="161"/>
        <source>No agent was found on this computer (looked for claude, codex and gemini on PATH).</source>
        <translation>No agent was found on this computer (looked for claude, codex and gemini on PATH).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="180"/>
        <source>Engram&apos;s hooks were added to %1</source>
        <translation>Engram&apos;s hooks were added to %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/agent_hooks.py" line="181"/>
        <source>Engram&apos;s hooks were removed from %1</source>
        <translation>Engram&apos;s hooks were removed from %1</translation>
    </message>
</context>
<context>
    <name>IndexWords</name>
    <message>
        <location filename="../desktop/ui/index_words.py" line="19"/>
        <source>Listing files</source>
        <translation>Listing files</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="19"/>
        <source>Reading code</source>
        <translation>Reading code</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="20"/>
        <source>Linking symbols</source>
        <translation>Linking symbols</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="20"/>
        <source>Finding modules</source>
        <translation>Finding modules</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="21"/>
        <source>Remembering code</source>
        <translation>Remembering code</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="21"/>
        <source>Mapping dependencies</source>
        <translation>Mapping dependencies</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="29"/>
        <source>%1: %n links written</source>
        <translation>
            <numerusform>%1: %n link written</numerusform>
            <numerusform>%1: %n links written</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="31"/>
        <source>%1: %2 of %n files</source>
        <translation>
            <numerusform>%1: %2 of %n file</numerusform>
            <numerusform>%1: %2 of %n files</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="36"/>
        <source>Engram cannot read this folder (%1). Nothing was indexed; check its permissions.</source>
        <translation>Engram cannot read this folder (%1). Nothing was indexed; check its permissions.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="37"/>
        <source>permission denied</source>
        <translation>permission denied</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="39"/>
        <source>No source code here: %n files, none of a kind Engram reads (code, scripts, Markdown). Is this the right folder?</source>
        <translation>
            <numerusform>No source code here: %n file, not of a kind Engram reads (code, scripts, Markdown). Is this the right folder?</numerusform>
            <numerusform>No source code here: %n files, none of a kind Engram reads (code, scripts, Markdown). Is this the right folder?</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="42"/>
        <source>This folder is empty: there is nothing to index.</source>
        <translation>This folder is empty: there is nothing to index.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/index_words.py" line="44"/>
        <source>Indexing was stopped; it resumes the next time the project opens.</source>
        <translation>Indexing was stopped; it resumes the next time the project opens.</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="46"/>
        <source>Indexed %n files</source>
        <translation>
            <numerusform>Indexed %n file</numerusform>
            <numerusform>Indexed %n files</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="46"/>
        <source>in %n modules.</source>
        <translation>
            <numerusform>in %n module.</numerusform>
            <numerusform>in %n modules.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="48"/>
        <source>%n files were skipped as too large (over 1 MB).</source>
        <translation>
            <numerusform>%n file was skipped as too large (over 1 MB).</numerusform>
            <numerusform>%n files were skipped as too large (over 1 MB).</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/index_words.py" line="50"/>
        <source>%n files or folders could not be read.</source>
        <translation>
            <numerusform>%n file or folder could not be read.</numerusform>
            <numerusform>%n files or folders could not be read.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>LearnedRow</name>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="46"/>
        <source>global</source>
        <translation>global</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="56"/>
        <source>OK</source>
        <translation>OK</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="58"/>
        <source>Right: keep it and raise its confidence</source>
        <translation>Right: keep it and raise its confidence</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="59"/>
        <source>Edit</source>
        <translation>Edit</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="61"/>
        <source>Almost right: fix the wording</source>
        <translation>Almost right: fix the wording</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="62"/>
        <source>Forget</source>
        <translation>Forget</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="64"/>
        <source>Wrong or useless: agents will not see it</source>
        <translation>Wrong or useless: agents will not see it</translation>
    </message>
</context>
<context>
    <name>LessonKinds</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="84"/>
        <source>your instruction</source>
        <translation>your instruction</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="85"/>
        <source>failed command, then one that worked</source>
        <translation>failed command, then one that worked</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="86"/>
        <source>command that worked</source>
        <translation>command that worked</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="87"/>
        <source>error fixed by an edit</source>
        <translation>error fixed by an edit</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="88"/>
        <source>cause stated by the agent</source>
        <translation>cause stated by the agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="89"/>
        <source>abandoned approach</source>
        <translation>abandoned approach</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="90"/>
        <source>recorded by an agent</source>
        <translation>recorded by an agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="91"/>
        <source>recurring error</source>
        <translation>recurring error</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="92"/>
        <source>command refused by a hook</source>
        <translation>command refused by a hook</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="93"/>
        <source>looked in the wrong place</source>
        <translation>looked in the wrong place</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="94"/>
        <source>checker&apos;s rule</source>
        <translation>checker&apos;s rule</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="95"/>
        <source>check that passed while a stronger one failed</source>
        <translation>check that passed while a stronger one failed</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="96"/>
        <source>fact about the project</source>
        <translation>fact about the project</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="97"/>
        <source>tests you asked for</source>
        <translation>tests you asked for</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="98"/>
        <source>tests you reviewed</source>
        <translation>tests you reviewed</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="99"/>
        <source>shell left in another folder</source>
        <translation>shell left in another folder</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="100"/>
        <source>command rewritten by the agent&apos;s shell tool</source>
        <translation>command rewritten by the agent&apos;s shell tool</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="101"/>
        <source>option the program does not take</source>
        <translation>option the program does not take</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="102"/>
        <source>tool call refused, then one that went through</source>
        <translation>tool call refused, then one that went through</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="103"/>
        <source>type of the project&apos;s own, mixed up with a plain one</source>
        <translation>type of the project&apos;s own, mixed up with a plain one</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../desktop/ui/main_window.py" line="120"/>
        <source>Open a project to begin.</source>
        <translation>Open a project to begin.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="122"/>
        <source>Also open in another Engram window: changes made there show here after you reopen the project.</source>
        <translation>Also open in another Engram window: changes made there show here after you reopen the project.</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="vanished">&amp;File</translation>
    </message>
    <message>
        <source>&amp;Open Project…</source>
        <translation type="vanished">&amp;Open Project…</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation type="vanished">Open &amp;Recent</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation type="vanished">&amp;Settings…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="vanished">&amp;Quit</translation>
    </message>
    <message>
        <source>&amp;Project</source>
        <translation type="vanished">&amp;Project</translation>
    </message>
    <message>
        <source>&amp;Teach Engram…</source>
        <translation type="vanished">&amp;Teach Engram…</translation>
    </message>
    <message>
        <source>Write down something agents should know</source>
        <translation type="vanished">Write down something agents should know</translation>
    </message>
    <message>
        <source>&amp;Review Memories…</source>
        <translation type="vanished">&amp;Review Memories…</translation>
    </message>
    <message>
        <source>Confirm or forget memories that wait for review</source>
        <translation type="vanished">Confirm or forget memories that wait for review</translation>
    </message>
    <message>
        <source>Resolve &amp;Conflicts…</source>
        <translation type="vanished">Resolve &amp;Conflicts…</translation>
    </message>
    <message>
        <source>Decide between memories that disagree</source>
        <translation type="vanished">Decide between memories that disagree</translation>
    </message>
    <message>
        <source>&amp;Get to Know This Project…</source>
        <translation type="vanished">&amp;Get to Know This Project…</translation>
    </message>
    <message>
        <source>Index the code and import agent rule files</source>
        <translation type="vanished">Index the code and import agent rule files</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="vanished">&amp;View</translation>
    </message>
    <message>
        <source>&amp;Memory Panel</source>
        <translation type="vanished">&amp;Memory Panel</translation>
    </message>
    <message>
        <source>Show or hide the memory panel (%1)</source>
        <translation type="vanished">Show or hide the memory panel (%1)</translation>
    </message>
    <message>
        <source>Last Session &amp;Summary…</source>
        <translation type="vanished">Last Session &amp;Summary…</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="vanished">&amp;Help</translation>
    </message>
    <message>
        <source>Guided &amp;Tour (Sample Project)</source>
        <translation type="vanished">Guided &amp;Tour (Sample Project)</translation>
    </message>
    <message>
        <source>Open a sample project Engram creates, with a scripted agent; your projects are not touched</source>
        <translation type="vanished">Open a sample project Engram creates, with a scripted agent; your projects are not touched</translation>
    </message>
    <message>
        <source>&amp;About Engram</source>
        <translation type="vanished">&amp;About Engram</translation>
    </message>
    <message>
        <source>Engram %1
Long-term memory for AI coding agents.</source>
        <translation type="vanished">Engram %1
Long-term memory for AI coding agents.</translation>
    </message>
    <message>
        <source>Switch project</source>
        <translation type="vanished">Switch project</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation type="vanished">Settings</translation>
    </message>
    <message>
        <source>Models, keys, data, language, trust</source>
        <translation type="vanished">Models, keys, data, language, trust</translation>
    </message>
    <message>
        <source>Guided tour (sample project)</source>
        <translation type="vanished">Guided tour (sample project)</translation>
    </message>
    <message>
        <source>No project open</source>
        <translation type="vanished">No project open</translation>
    </message>
    <message>
        <source>Open another folder…</source>
        <translation type="vanished">Open another folder…</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation type="vanished">Memory</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="137"/>
        <source>Removed %1 from the recent projects</source>
        <translation>Removed %1 from the recent projects</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="150"/>
        <source>Open a project folder</source>
        <translation>Open a project folder</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="156"/>
        <source>Opening %1…</source>
        <translation>Opening %1…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="178"/>
        <source>Damaged memory</source>
        <translation>Damaged memory</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="180"/>
        <source>Move the damaged file aside (it is kept, renamed) and start with an empty memory?</source>
        <translation>Move the damaged file aside (it is kept, renamed) and start with an empty memory?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="184"/>
        <source>Damaged file kept as %1</source>
        <translation>Damaged file kept as %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="187"/>
        <source>Cannot open project</source>
        <translation>Cannot open project</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="199"/>
        <source>Opened %1</source>
        <translation>Opened %1</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/main_window.py" line="217"/>
        <source>Learned %n memories from past agent sessions</source>
        <translation>
            <numerusform>Learned %n memory from past agent sessions</numerusform>
            <numerusform>Learned %n memories from past agent sessions</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="309"/>
        <source>Cannot open the tour</source>
        <translation>Cannot open the tour</translation>
    </message>
    <message>
        <location filename="../desktop/ui/main_window.py" line="365"/>
        <source>Language changed. Dialogs already open keep the old language until reopened.</source>
        <translation>Language changed. Dialogs already open keep the old language until reopened.</translation>
    </message>
</context>
<context>
    <name>MemoryBrowser</name>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="91"/>
        <source>Search memories…</source>
        <translation>Search memories…</translation>
    </message>
    <message>
        <source>All types</source>
        <translation type="vanished">All types</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="95"/>
        <source>All memories</source>
        <translation>All memories</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="101"/>
        <source>Code index (not memories)</source>
        <translation>Code index (not memories)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="104"/>
        <source>Not forgotten</source>
        <translation>Not forgotten</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="109"/>
        <source>All scopes</source>
        <translation>All scopes</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="114"/>
        <source>All sources</source>
        <translation>All sources</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="117"/>
        <source>Filter by type</source>
        <translation>Filter by type</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="118"/>
        <source>Filter by status</source>
        <translation>Filter by status</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="119"/>
        <source>Filter by scope</source>
        <translation>Filter by scope</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="120"/>
        <source>Filter by where the memory came from</source>
        <translation>Filter by where the memory came from</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="149"/>
        <source>&amp;Add…</source>
        <translation>&amp;Add…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="150"/>
        <source>&amp;Edit…</source>
        <translation>&amp;Edit…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="151"/>
        <location filename="../desktop/ui/memory_panel.py" line="300"/>
        <source>&amp;Pin</source>
        <translation>&amp;Pin</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="152"/>
        <location filename="../desktop/ui/memory_panel.py" line="302"/>
        <source>&amp;Forget</source>
        <translation>&amp;Forget</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="153"/>
        <source>Flag &amp;wrong…</source>
        <translation>Flag &amp;wrong…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="156"/>
        <source>&amp;Team</source>
        <translation>&amp;Team</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="159"/>
        <source>Share with the team</source>
        <translation>Share with the team</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="159"/>
        <source>Keep personal</source>
        <translation>Keep personal</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="160"/>
        <source>Follow the shared types</source>
        <translation>Follow the shared types</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="163"/>
        <source>Correct this memory: outdated, partly wrong, not applicable or incorrect</source>
        <translation>Correct this memory: outdated, partly wrong, not applicable or incorrect</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="168"/>
        <source>Teach Engram something agents should know</source>
        <translation>Teach Engram something agents should know</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="169"/>
        <source>Pinned memories are always given to agents and never fade</source>
        <translation>Pinned memories are always given to agents and never fade</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="170"/>
        <source>Agents will no longer see this memory</source>
        <translation>Agents will no longer see this memory</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/memory_panel.py" line="215"/>
        <source>%n memories</source>
        <translation>
            <numerusform>%n memory</numerusform>
            <numerusform>%n memories</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/memory_panel.py" line="215"/>
        <source>%n code chunks</source>
        <translation>
            <numerusform>%n code chunk</numerusform>
            <numerusform>%n code chunks</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="253"/>
        <source>Select a memory to see where it came from.</source>
        <translation>Select a memory to see where it came from.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="300"/>
        <source>Un&amp;pin</source>
        <translation>Un&amp;pin</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="302"/>
        <source>&amp;Restore</source>
        <translation>&amp;Restore</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="309"/>
        <location filename="../desktop/ui/memory_panel.py" line="314"/>
        <source>Not saved</source>
        <translation>Not saved</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="324"/>
        <source>Memory saved</source>
        <translation>Memory saved</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="335"/>
        <source>Memory updated</source>
        <translation>Memory updated</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="344"/>
        <source>Team sharing updated</source>
        <translation>Team sharing updated</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="351"/>
        <source>Unpinned</source>
        <translation>Unpinned</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="351"/>
        <source>Pinned</source>
        <translation>Pinned</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="359"/>
        <source>Memory restored</source>
        <translation>Memory restored</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_panel.py" line="362"/>
        <source>Memory forgotten</source>
        <translation>Memory forgotten</translation>
    </message>
</context>
<context>
    <name>MemoryDetail</name>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="37"/>
        <source>Evidence</source>
        <translation>Evidence</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="39"/>
        <source>Sessions it was learned from: %1</source>
        <translation>Sessions it was learned from: %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="49"/>
        <source>linked events: %1</source>
        <translation>linked events: %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="63"/>
        <source>Imported from %1</source>
        <translation>Imported from %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="65"/>
        <source>section “%1”</source>
        <translation>section “%1”</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="69"/>
        <source>Learned in session %1</source>
        <translation>Learned in session %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="72"/>
        <source>Taught with /remember</source>
        <translation>Taught with /remember</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="83"/>
        <source>Provenance</source>
        <translation>Provenance</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="84"/>
        <source>Why this exists</source>
        <translation>Why this exists</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="85"/>
        <source>Why was this retrieved for “%1”?</source>
        <translation>Why was this retrieved for “%1”?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="86"/>
        <source>It matches the filters but would not rank among the top results.</source>
        <translation>It matches the filters but would not rank among the top results.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="89"/>
        <source>Total</source>
        <translation>Total</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="90"/>
        <source>Superseded by</source>
        <translation>Superseded by</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="91"/>
        <source>History</source>
        <translation>History</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="94"/>
        <source>Type</source>
        <translation>Type</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="95"/>
        <source>Status</source>
        <translation>Status</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="97"/>
        <source>Confidence</source>
        <translation>Confidence</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="99"/>
        <source>verified by you</source>
        <translation>verified by you</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="101"/>
        <source>Source</source>
        <translation>Source</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="102"/>
        <source>shared by %1</source>
        <translation>shared by %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="104"/>
        <source>Scope</source>
        <translation>Scope</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="105"/>
        <source>Files</source>
        <translation>Files</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="106"/>
        <source>Modules</source>
        <translation>Modules</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="107"/>
        <source>Tags</source>
        <translation>Tags</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="108"/>
        <source>Created</source>
        <translation>Created</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="109"/>
        <source>Times used</source>
        <translation>Times used</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="111"/>
        <source>Sessions</source>
        <translation>Sessions</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="114"/>
        <source>Commit</source>
        <translation>Commit</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="150"/>
        <source>you</source>
        <translation>you</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="151"/>
        <source>an agent</source>
        <translation>an agent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="152"/>
        <source>an import</source>
        <translation>an import</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="170"/>
        <source>learned from a session</source>
        <translation>learned from a session</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/detail.py" line="174"/>
        <source>you declined `%1` in session %2</source>
        <translation>you declined `%1` in session %2</translation>
    </message>
</context>
<context>
    <name>MemoryEditor</name>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="39"/>
        <source>Edit memory</source>
        <translation>Edit memory</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="39"/>
        <source>Teach Engram</source>
        <translation>Teach Engram</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="42"/>
        <source>What should agents know? e.g. “Run migrations with make migrate, never with alembic directly.”</source>
        <translation>What should agents know? e.g. “Run migrations with make migrate, never with alembic directly.”</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="49"/>
        <source>Whole project</source>
        <translation>Whole project</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="50"/>
        <source>One module</source>
        <translation>One module</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="51"/>
        <source>This task</source>
        <translation>This task</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="52"/>
        <source>This session</source>
        <translation>This session</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="55"/>
        <source>src/auth/tokens.ts, src/auth/session.ts</source>
        <translation>src/auth/tokens.ts, src/auth/session.ts</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="57"/>
        <source>security, build</source>
        <translation>security, build</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="65"/>
        <source>&amp;Memory</source>
        <translation>&amp;Memory</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="66"/>
        <source>&amp;Type</source>
        <translation>&amp;Type</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="67"/>
        <source>&amp;Applies to</source>
        <translation>&amp;Applies to</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="68"/>
        <source>Related &amp;files</source>
        <translation>Related &amp;files</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_editor.py" line="69"/>
        <source>Ta&amp;gs</source>
        <translation>Ta&amp;gs</translation>
    </message>
    <message>
        <source>&amp;Confidence</source>
        <translation type="vanished">&amp;Confidence</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/memory_editor.py" line="114"/>
        <source>A memory needs some text (at most %n characters).</source>
        <translation>
            <numerusform>A memory needs some text (at most %n character).</numerusform>
            <numerusform>A memory needs some text (at most %n characters).</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>MemoryListModel</name>
    <message>
        <location filename="../desktop/ui/memory_model.py" line="220"/>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_model.py" line="220"/>
        <source>Type</source>
        <translation>Type</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_model.py" line="220"/>
        <source>Memory</source>
        <translation>Memory</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_model.py" line="220"/>
        <source>Confidence</source>
        <translation>Confidence</translation>
    </message>
    <message>
        <location filename="../desktop/ui/memory_model.py" line="221"/>
        <source>Status</source>
        <translation>Status</translation>
    </message>
</context>
<context>
    <name>MemoryModelChooser</name>
    <message>
        <location filename="../desktop/ui/dialogs/memory_model.py" line="28"/>
        <source>Learn with a model you already use (optional)</source>
        <translation>Learn with a model you already use (optional)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/memory_model.py" line="33"/>
        <source>Engram&apos;s rules learn from your sessions for free. An agent you are logged into can also write memories from each finished session: every one is checked against what the session showed and waits for your review. You can change this in Settings.</source>
        <translation>Engram&apos;s rules learn from your sessions for free. An agent you are logged into can also write memories from each finished session: every one is checked against what the session showed and waits for your review. You can change this in Settings.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/memory_model.py" line="38"/>
        <source>Rules only (nothing is sent, nothing is spent)</source>
        <translation>Rules only (nothing is sent, nothing is spent)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/memory_model.py" line="53"/>
        <source>%1: one request of at most %2 tokens per finished session, on your account</source>
        <translation>%1: one request of at most %2 tokens per finished session, on your account</translation>
    </message>
</context>
<context>
    <name>MemoryPanel</name>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="40"/>
        <source>&amp;Health</source>
        <translation>&amp;Health</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="41"/>
        <source>Module &amp;map</source>
        <translation>Module &amp;map</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="42"/>
        <source>&amp;Browse</source>
        <translation>&amp;Browse</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="43"/>
        <source>As&amp;k Memory</source>
        <translation>As&amp;k Memory</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="44"/>
        <source>&amp;Agents</source>
        <translation>&amp;Agents</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="45"/>
        <source>How healthy this project&apos;s memory is</source>
        <translation>How healthy this project&apos;s memory is</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="46"/>
        <source>Modules of the code, their dependencies and what memory knows about them</source>
        <translation>Modules of the code, their dependencies and what memory knows about them</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="47"/>
        <source>Search, filter and correct memories</source>
        <translation>Search, filter and correct memories</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="48"/>
        <source>Ask a question; the answer cites memories</source>
        <translation>Ask a question; the answer cites memories</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/panel.py" line="49"/>
        <source>What Claude Code, Codex and Gemini CLI sessions were told by Engram&apos;s hooks</source>
        <translation>What Claude Code, Codex and Gemini CLI sessions were told by Engram&apos;s hooks</translation>
    </message>
</context>
<context>
    <name>MemoryScopes</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="58"/>
        <source>Whole project</source>
        <translation>Whole project</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="59"/>
        <source>One module</source>
        <translation>One module</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="60"/>
        <source>This task</source>
        <translation>This task</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="61"/>
        <source>This session</source>
        <translation>This session</translation>
    </message>
</context>
<context>
    <name>MemorySources</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="45"/>
        <source>Agent (explicit)</source>
        <translation>Agent (explicit)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="46"/>
        <source>Observer (inferred)</source>
        <translation>Observer (inferred)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="47"/>
        <source>QA (automatic)</source>
        <translation>QA (automatic)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="48"/>
        <source>MCP (automatic)</source>
        <translation>MCP (automatic)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="49"/>
        <source>Commit (automatic)</source>
        <translation>Commit (automatic)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="50"/>
        <source>Taught by you</source>
        <translation>Taught by you</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="51"/>
        <source>Imported</source>
        <translation>Imported</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="52"/>
        <source>Code index</source>
        <translation>Code index</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="53"/>
        <source>Your correction</source>
        <translation>Your correction</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="54"/>
        <source>Taught by a teammate</source>
        <translation>Taught by a teammate</translation>
    </message>
</context>
<context>
    <name>MemoryStatus</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="37"/>
        <source>Active</source>
        <translation>Active</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="38"/>
        <source>Needs review</source>
        <translation>Needs review</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="39"/>
        <source>Stale</source>
        <translation>Stale</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="40"/>
        <source>Forgotten</source>
        <translation>Forgotten</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="41"/>
        <source>Candidate</source>
        <translation>Candidate</translation>
    </message>
</context>
<context>
    <name>MemoryTypes</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="16"/>
        <source>Gotcha</source>
        <translation>Gotcha</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="17"/>
        <source>Decision</source>
        <translation>Decision</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="18"/>
        <source>Preference</source>
        <translation>Preference</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="19"/>
        <source>Pattern</source>
        <translation>Pattern</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="20"/>
        <source>Requirement</source>
        <translation>Requirement</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="21"/>
        <source>Error pattern</source>
        <translation>Error pattern</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="22"/>
        <source>Module insight</source>
        <translation>Module insight</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="23"/>
        <source>Prefetch pattern</source>
        <translation>Prefetch pattern</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="24"/>
        <source>Work state</source>
        <translation>Work state</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="25"/>
        <source>Causal dependency</source>
        <translation>Causal dependency</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="26"/>
        <source>Task calibration</source>
        <translation>Task calibration</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="27"/>
        <source>E2E observation</source>
        <translation>E2E observation</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="28"/>
        <source>Dead end</source>
        <translation>Dead end</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="29"/>
        <source>Work outcome</source>
        <translation>Work outcome</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="30"/>
        <source>Workflow recipe</source>
        <translation>Workflow recipe</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="31"/>
        <source>Context cost</source>
        <translation>Context cost</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="32"/>
        <source>Code</source>
        <translation>Code</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="33"/>
        <source>Note</source>
        <translation>Note</translation>
    </message>
</context>
<context>
    <name>Messages</name>
    <message>
        <location filename="../desktop/ui/messages.py" line="31"/>
        <source>The memory database of this project is damaged. Engram did not change it.</source>
        <translation>The memory database of this project is damaged. Engram did not change it.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="34"/>
        <source>This project&apos;s memory was saved by a newer version of Engram. Update Engram to open it; nothing was changed.</source>
        <translation>This project&apos;s memory was saved by a newer version of Engram. Update Engram to open it; nothing was changed.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="39"/>
        <source>Engram cannot write to its data folder. Check its permissions or choose another data location in Settings.</source>
        <translation>Engram cannot write to its data folder. Check its permissions or choose another data location in Settings.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="44"/>
        <source>The disk is full. The last change was not saved; everything saved before is safe.</source>
        <translation>The disk is full. The last change was not saved; everything saved before is safe.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="47"/>
        <source>Another Engram window kept the memory busy. Please try again.</source>
        <translation>Another Engram window kept the memory busy. Please try again.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="48"/>
        <source>This text contains what looks like a secret, so it was not saved:</source>
        <translation>This text contains what looks like a secret, so it was not saved:</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="51"/>
        <source>That memory no longer exists.</source>
        <translation>That memory no longer exists.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="52"/>
        <source>This input was not accepted:</source>
        <translation>This input was not accepted:</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="53"/>
        <source>The project is closing; the change was not saved.</source>
        <translation>The project is closing; the change was not saved.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="54"/>
        <source>Engram could not do this.</source>
        <translation>Engram could not do this.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="55"/>
        <source>The memory database could not be used.</source>
        <translation>The memory database could not be used.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="56"/>
        <source>The model server did not answer. Is it running, and is its address right in Settings?</source>
        <translation>The model server did not answer. Is it running, and is its address right in Settings?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="57"/>
        <source>The model server took too long to answer.</source>
        <translation>The model server took too long to answer.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="58"/>
        <source>The model provider refused the API key. Set a valid one in Settings.</source>
        <translation>The model provider refused the API key. Set a valid one in Settings.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="59"/>
        <source>The model provider is limiting requests. Try again shortly.</source>
        <translation>The model provider is limiting requests. Try again shortly.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="60"/>
        <source>The model provider reported an error.</source>
        <translation>The model provider reported an error.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="61"/>
        <source>The model provider answered with an HTTP error.</source>
        <translation>The model provider answered with an HTTP error.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="62"/>
        <source>The model server answered something Engram does not understand.</source>
        <translation>The model server answered something Engram does not understand.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="63"/>
        <source>The connection to the model closed while it was answering.</source>
        <translation>The connection to the model closed while it was answering.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="64"/>
        <source>The embedding server answered something Engram does not understand.</source>
        <translation>The embedding server answered something Engram does not understand.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="65"/>
        <source>No API key is stored for this provider. Add one in Settings; it is kept in the system keyring.</source>
        <translation>No API key is stored for this provider. Add one in Settings; it is kept in the system keyring.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="66"/>
        <source>No secure credential store is available on this computer, so no API key or team connection can be kept.</source>
        <translation>No secure credential store is available on this computer, so no API key or team connection can be kept.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="78"/>
        <source>This is not a PostgreSQL connection string: give it as postgresql://user:password@host/database.</source>
        <translation>This is not a PostgreSQL connection string: give it as postgresql://user:password@host/database.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="67"/>
        <source>The system keyring failed (locked or access denied).</source>
        <translation>The system keyring failed (locked or access denied).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="68"/>
        <source>This model is not available. Pull it with Ollama or choose another in Settings.</source>
        <translation>This model is not available. Pull it with Ollama or choose another in Settings.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="69"/>
        <source>Unknown provider.</source>
        <translation>Unknown provider.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="70"/>
        <source>Only you can do this to that memory; an agent asked for it and was refused.</source>
        <translation>Only you can do this to that memory; an agent asked for it and was refused.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="71"/>
        <source>Team sync could not do this.</source>
        <translation>Team sync could not do this.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="72"/>
        <source>This project is not connected to a team.</source>
        <translation>This project is not connected to a team.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="73"/>
        <source>The team server cannot be reached.</source>
        <translation>The team server cannot be reached.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="74"/>
        <source>The team server refused these credentials.</source>
        <translation>The team server refused these credentials.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="75"/>
        <source>The team server was upgraded by a newer Engram; update Engram to sync with it.</source>
        <translation>The team server was upgraded by a newer Engram; update Engram to sync with it.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="76"/>
        <source>The team server is not ready for this version of Engram; ask the team admin to run engram team init.</source>
        <translation>The team server is not ready for this version of Engram; ask the team admin to run engram team init.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="77"/>
        <source>These credentials do not belong to a team on this server.</source>
        <translation>These credentials do not belong to a team on this server.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="79"/>
        <source>The agent stopped because of an error.</source>
        <translation>The agent stopped because of an error.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="80"/>
        <source>The agent&apos;s action was not allowed.</source>
        <translation>The agent&apos;s action was not allowed.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="81"/>
        <source>The agent tried to reach a file outside the project folder.</source>
        <translation>The agent tried to reach a file outside the project folder.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="82"/>
        <source>The tour agent ran out of scripted turns.</source>
        <translation>The tour agent ran out of scripted turns.</translation>
    </message>
    <message>
        <source>That agent&apos;s command-line tool is not installed.</source>
        <translation type="vanished">That agent&apos;s command-line tool is not installed.</translation>
    </message>
    <message>
        <source>The external agent exited with an error.</source>
        <translation type="vanished">The external agent exited with an error.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="83"/>
        <source>That file or symbol is not in the code graph.</source>
        <translation>That file or symbol is not in the code graph.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="84"/>
        <source>A transcript could not be read.</source>
        <translation>A transcript could not be read.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="85"/>
        <source>The scripted tour agent runs only on the tour&apos;s sample project.</source>
        <translation>The scripted tour agent runs only on the tour&apos;s sample project.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/messages.py" line="23"/>
        <source>Something went wrong inside Engram (a bug): %1</source>
        <translation>Something went wrong inside Engram (a bug): %1</translation>
    </message>
</context>
<context>
    <name>ModelNotice</name>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="26"/>
        <source>Open &amp;Settings…</source>
        <translation>Open &amp;Settings…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="27"/>
        <source>Take the guided &amp;tour</source>
        <translation>Take the guided &amp;tour</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="28"/>
        <source>A sample project Engram creates for the tour; your projects are not touched</source>
        <translation>A sample project Engram creates for the tour; your projects are not touched</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="46"/>
        <source>&lt;b&gt;No model is set up for the agent.&lt;/b&gt;</source>
        <translation>&lt;b&gt;No model is set up for the agent.&lt;/b&gt;</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="48"/>
        <source>Ollama is running on this machine with %1. Choose Ollama and a model in Settings.</source>
        <translation>Ollama is running on this machine with %1. Choose Ollama and a model in Settings.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="51"/>
        <source>Ollama is running on this machine but has no model yet: run &lt;code&gt;ollama pull %1&lt;/code&gt;, then choose it in Settings.</source>
        <translation>Ollama is running on this machine but has no model yet: run &lt;code&gt;ollama pull %1&lt;/code&gt;, then choose it in Settings.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="55"/>
        <source>Ollama was not found on this machine: install it from ollama.com and run &lt;code&gt;ollama pull %1&lt;/code&gt;, or use a hosted model.</source>
        <translation>Ollama was not found on this machine: install it from ollama.com and run &lt;code&gt;ollama pull %1&lt;/code&gt;, or use a hosted model.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/setup_notice.py" line="58"/>
        <source>For a hosted model, choose OpenAI-compatible or Anthropic in Settings and add its API key (kept in the system keyring).</source>
        <translation>For a hosted model, choose OpenAI-compatible or Anthropic in Settings and add its API key (kept in the system keyring).</translation>
    </message>
</context>
<context>
    <name>ModuleCard</name>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="65"/>
        <source>Show the files of this module</source>
        <translation>Show the files of this module</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="67"/>
        <source>Module %1 in the code graph</source>
        <translation>Module %1 in the code graph</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/module_map.py" line="68"/>
        <source>%n files</source>
        <translation>
            <numerusform>%n file</numerusform>
            <numerusform>%n files</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/module_map.py" line="69"/>
        <source>%n memories</source>
        <translation>
            <numerusform>%n memory</numerusform>
            <numerusform>%n memories</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="70"/>
        <source>uses: %1</source>
        <translation>uses: %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="71"/>
        <source>used by: %1</source>
        <translation>used by: %1</translation>
    </message>
</context>
<context>
    <name>ModuleMap</name>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="102"/>
        <source>Reading the module map…</source>
        <translation>Reading the module map…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="112"/>
        <source>File or file:symbol, e.g. src/auth/tokens.py</source>
        <translation>File or file:symbol, e.g. src/auth/tokens.py</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="113"/>
        <source>&amp;Impact</source>
        <translation>&amp;Impact</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="115"/>
        <source>What may break if this changes</source>
        <translation>What may break if this changes</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="118"/>
        <source>Depends on it</source>
        <translation>Depends on it</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="118"/>
        <source>Symbols</source>
        <translation>Symbols</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/module_map.py" line="171"/>
        <source>%n modules</source>
        <translation>
            <numerusform>%n module</numerusform>
            <numerusform>%n modules</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/module_map.py" line="172"/>
        <source>%n dependencies between modules</source>
        <translation>
            <numerusform>%n dependency between module</numerusform>
            <numerusform>%n dependencies between modules</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="173"/>
        <source>No code graph yet: index the project (first run) to see its modules.</source>
        <translation>No code graph yet: index the project (first run) to see its modules.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="192"/>
        <source>Not in the code graph: %1</source>
        <translation>Not in the code graph: %1</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/panel/module_map.py" line="194"/>
        <source>%n files may be affected</source>
        <translation>
            <numerusform>%n file may be affected</numerusform>
            <numerusform>%n files may be affected</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/panel/module_map.py" line="196"/>
        <source>Depth %1</source>
        <translation>Depth %1</translation>
    </message>
</context>
<context>
    <name>Onboarding</name>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="65"/>
        <source>Getting to know %1</source>
        <translation>Getting to know %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="80"/>
        <source>No language model is set up. Engram still indexes your code, keeps and searches memories, and the offline demo agent works. Agents without memory rediscover your codebase every session: install Ollama and run “ollama pull %1”, or choose a provider in Settings.</source>
        <translation>No language model is set up. Engram still indexes your code, keeps and searches memories, and the offline demo agent works. Agents without memory rediscover your codebase every session: install Ollama and run “ollama pull %1”, or choose a provider in Settings.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="96"/>
        <source>Getting to know your project</source>
        <translation>Getting to know your project</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="100"/>
        <source>Looking at the files…</source>
        <translation>Looking at the files…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="102"/>
        <source>&amp;Continue</source>
        <translation>&amp;Continue</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="104"/>
        <source>Indexing goes on in the background</source>
        <translation>Indexing goes on in the background</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="106"/>
        <source>Close and remove from recent projects</source>
        <translation>Close and remove from recent projects</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="108"/>
        <source>This folder has nothing Engram can index; nothing is deleted</source>
        <translation>This folder has nothing Engram can index; nothing is deleted</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="131"/>
        <source>The code graph is not available; skipping indexing.</source>
        <translation>The code graph is not available; skipping indexing.</translation>
    </message>
    <message>
        <source>Listing files</source>
        <translation type="vanished">Listing files</translation>
    </message>
    <message>
        <source>Reading code</source>
        <translation type="vanished">Reading code</translation>
    </message>
    <message>
        <source>Linking symbols</source>
        <translation type="vanished">Linking symbols</translation>
    </message>
    <message>
        <source>Finding modules</source>
        <translation type="vanished">Finding modules</translation>
    </message>
    <message>
        <source>Remembering code</source>
        <translation type="vanished">Remembering code</translation>
    </message>
    <message>
        <source>Mapping dependencies</source>
        <translation type="vanished">Mapping dependencies</translation>
    </message>
    <message>
        <source>%1: %2 of %3 files</source>
        <translation type="vanished">%1: %2 of %3 files</translation>
    </message>
    <message numerus="yes">
        <source>Indexed %n files</source>
        <translation type="vanished">
            <numerusform>Indexed %n file</numerusform>
            <numerusform>Indexed %n files</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>in %n modules.</source>
        <translation type="vanished">
            <numerusform>in %n module.</numerusform>
            <numerusform>in %n modules.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="164"/>
        <source>Indexing failed; the details are in the log. Memories still work without the code index.</source>
        <translation>Indexing failed; the details are in the log. Memories still work without the code index.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="178"/>
        <source>Untick a rule to leave it out</source>
        <translation>Untick a rule to leave it out</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="180"/>
        <source>&amp;Import selected</source>
        <translation>&amp;Import selected</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="182"/>
        <source>&amp;Skip</source>
        <translation>&amp;Skip</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/dialogs/onboarding.py" line="206"/>
        <source>Found %n rules. Import them as memories?</source>
        <translation>
            <numerusform>Found %n rule. Import it as a memory?</numerusform>
            <numerusform>Found %n rules. Import them as memories?</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="208"/>
        <source>From %1. What you keep ticked is confirmed as yours; untick what agents should not be told.</source>
        <translation>From %1. What you keep ticked is confirmed as yours; untick what agents should not be told.</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/dialogs/onboarding.py" line="235"/>
        <source>%n rules imported and confirmed</source>
        <translation>
            <numerusform>%n rule imported and confirmed</numerusform>
            <numerusform>%n rules imported and confirmed</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="242"/>
        <source>Tell me if anything looks wrong — you are always the authority.</source>
        <translation>Tell me if anything looks wrong — you are always the authority.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="248"/>
        <source>&amp;Confirm</source>
        <translation>&amp;Confirm</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="250"/>
        <source>&amp;Forget</source>
        <translation>&amp;Forget</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="252"/>
        <source>Confirm &amp;all remaining</source>
        <translation>Confirm &amp;all remaining</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="254"/>
        <source>Right (your edits to the text are saved too)</source>
        <translation>Right (your edits to the text are saved too)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/onboarding.py" line="270"/>
        <source>Review memories</source>
        <translation>Review memories</translation>
    </message>
</context>
<context>
    <name>ProviderChoice</name>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="23"/>
        <source>Which model runs the agent (set it up in Settings).</source>
        <translation>Which model runs the agent (set it up in Settings).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="24"/>
        <source>Guided tour agent (sample project only)</source>
        <translation>Guided tour agent (sample project only)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="25"/>
        <source>Ollama (local)</source>
        <translation>Ollama (local)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="25"/>
        <source>OpenAI-compatible</source>
        <translation>OpenAI-compatible</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="26"/>
        <source>Anthropic</source>
        <translation>Anthropic</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="33"/>
        <source>The scripted tour agent changes nothing, so it runs only on the tour&apos;s sample project.</source>
        <translation>The scripted tour agent changes nothing, so it runs only on the tour&apos;s sample project.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/provider_choice.py" line="41"/>
        <source>No model set up</source>
        <translation>No model set up</translation>
    </message>
</context>
<context>
    <name>ScoreParts</name>
    <message>
        <location filename="../desktop/ui/labels.py" line="107"/>
        <source>Keyword match</source>
        <translation>Keyword match</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="108"/>
        <source>Meaning match</source>
        <translation>Meaning match</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="109"/>
        <source>Code graph proximity</source>
        <translation>Code graph proximity</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="110"/>
        <source>Confidence</source>
        <translation>Confidence</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="111"/>
        <source>Recency</source>
        <translation>Recency</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="112"/>
        <source>Source trust</source>
        <translation>Source trust</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="113"/>
        <source>Pinned</source>
        <translation>Pinned</translation>
    </message>
    <message>
        <location filename="../desktop/ui/labels.py" line="114"/>
        <source>Past use</source>
        <translation>Past use</translation>
    </message>
</context>
<context>
    <name>SessionSummary</name>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="96"/>
        <location filename="../desktop/ui/dialogs/summary.py" line="105"/>
        <source>Session complete</source>
        <translation>Session complete</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="106"/>
        <source>What the agent remembered</source>
        <translation>What the agent remembered</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="108"/>
        <source>No memory was used.</source>
        <translation>No memory was used.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="114"/>
        <source>Flag</source>
        <translation>Flag</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="115"/>
        <source>This memory was wrong — correct it</source>
        <translation>This memory was wrong — correct it</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/dialogs/summary.py" line="120"/>
        <source>What the agent learned (%n new memories)</source>
        <translation>
            <numerusform>What the agent learned (%n new memory)</numerusform>
            <numerusform>What the agent learned (%n new memories)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/dialogs/summary.py" line="122"/>
        <source>New memories that need your review (%n)</source>
        <translation>
            <numerusform>New memory that need your review (%n)</numerusform>
            <numerusform>New memories that need your review (%n)</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="133"/>
        <source>&amp;Save all confirmed</source>
        <translation>&amp;Save all confirmed</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="135"/>
        <source>Keep every new memory you did not forget, as confirmed</source>
        <translation>Keep every new memory you did not forget, as confirmed</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="137"/>
        <source>&amp;Review later</source>
        <translation>&amp;Review later</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/summary.py" line="139"/>
        <source>Apply what you decided; the rest waits in “Needs review”</source>
        <translation>Apply what you decided; the rest waits in “Needs review”</translation>
    </message>
</context>
<context>
    <name>SessionView</name>
    <message>
        <source>Which model runs the agent (set it up in Settings).</source>
        <translation type="vanished">Which model runs the agent (set it up in Settings).</translation>
    </message>
    <message>
        <source>Guided tour agent (sample project only)</source>
        <translation type="vanished">Guided tour agent (sample project only)</translation>
    </message>
    <message>
        <source>Ollama (local)</source>
        <translation type="vanished">Ollama (local)</translation>
    </message>
    <message>
        <source>OpenAI-compatible</source>
        <translation type="vanished">OpenAI-compatible</translation>
    </message>
    <message>
        <source>Anthropic</source>
        <translation type="vanished">Anthropic</translation>
    </message>
    <message>
        <source>The scripted tour agent changes nothing, so it runs only on the tour&apos;s sample project.</source>
        <translation type="vanished">The scripted tour agent changes nothing, so it runs only on the tour&apos;s sample project.</translation>
    </message>
    <message>
        <source>Needs the agent runtime and a configured model (Settings).</source>
        <translation type="vanished">Needs the agent runtime and a configured model (Settings).</translation>
    </message>
    <message>
        <source>No model set up</source>
        <translation type="vanished">No model set up</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="112"/>
        <source>&amp;Start</source>
        <translation>&amp;Start</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="114"/>
        <location filename="../desktop/ui/session/view.py" line="327"/>
        <source>Run the agent on the task (Ctrl+Enter)</source>
        <translation>Run the agent on the task (Ctrl+Enter)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="115"/>
        <source>S&amp;top</source>
        <translation>S&amp;top</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="117"/>
        <source>Stop the agent after its current step</source>
        <translation>Stop the agent after its current step</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="119"/>
        <source>Ready</source>
        <translation>Ready</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="121"/>
        <source>&amp;Provider:</source>
        <translation>&amp;Provider:</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="145"/>
        <source>Right-click a file to teach Engram something about it</source>
        <translation>Right-click a file to teach Engram something about it</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="155"/>
        <source>The agent&apos;s answer streams here. Memories it cites appear as chips you can flag.</source>
        <translation>The agent&apos;s answer streams here. Memories it cites appear as chips you can flag.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="162"/>
        <source>Tool calls</source>
        <translation>Tool calls</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="164"/>
        <source>Tools the agent called; unfold one to see its arguments and result</source>
        <translation>Tools the agent called; unfold one to see its arguments and result</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="175"/>
        <source>Sounds like a correction. Create a correction memory?</source>
        <translation>Sounds like a correction. Create a correction memory?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="176"/>
        <source>Create &amp;correction…</source>
        <translation>Create &amp;correction…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="177"/>
        <source>Dismiss</source>
        <translation>Dismiss</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="192"/>
        <source>Describe a task, then Ctrl+Enter. “/remember TEXT” teaches a memory right away.</source>
        <translation>Describe a task, then Ctrl+Enter. “/remember TEXT” teaches a memory right away.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="199"/>
        <source>Try a task such as “%1”, then Ctrl+Enter.</source>
        <translation>Try a task such as “%1”, then Ctrl+Enter.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="167"/>
        <source>Guided tour: press Start to run the suggested task. The tour&apos;s agent reads the sample project&apos;s memories and cites them as chips: click a chip to open the memory, flag it if it is wrong. It changes no file.</source>
        <translation>Guided tour: press Start to run the suggested task. The tour&apos;s agent reads the sample project&apos;s memories and cites them as chips: click a chip to open the memory, flag it if it is wrong. It changes no file.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="233"/>
        <location filename="../desktop/ui/session/view.py" line="328"/>
        <source>Set up a model in Settings first</source>
        <translation>Set up a model in Settings first</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="250"/>
        <source>You</source>
        <translation>You</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="268"/>
        <source>Recalling memories…</source>
        <translation>Recalling memories…</translation>
    </message>
    <message numerus="yes">
        <location filename="../desktop/ui/session/view.py" line="273"/>
        <source>%n memories given to the agent</source>
        <translation>
            <numerusform>%n memory given to the agent</numerusform>
            <numerusform>%n memories given to the agent</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="275"/>
        <source>Called %1</source>
        <translation>Called %1</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="286"/>
        <source>The session failed:</source>
        <translation>The session failed:</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="292"/>
        <source>Stopped</source>
        <translation>Stopped</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="293"/>
        <source>Finished</source>
        <translation>Finished</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="293"/>
        <source>Failed</source>
        <translation>Failed</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="335"/>
        <source>Running…</source>
        <translation>Running…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="345"/>
        <source>Teach Engram this…</source>
        <translation>Teach Engram this…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/session/view.py" line="364"/>
        <source>Teach Engram about %1…</source>
        <translation>Teach Engram about %1…</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="42"/>
        <source>None (memory still works, without answers)</source>
        <translation>None (memory still works, without answers)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="43"/>
        <source>Ollama (local)</source>
        <translation>Ollama (local)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="44"/>
        <location filename="../desktop/ui/dialogs/settings.py" line="55"/>
        <source>OpenAI-compatible</source>
        <translation>OpenAI-compatible</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="45"/>
        <source>Anthropic</source>
        <translation>Anthropic</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="47"/>
        <source>The agent model above, when one is set</source>
        <extracomment>What writes memories from each finished session besides the rules (Settings.memory_model).</extracomment>
        <translation>The agent model above, when one is set</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="48"/>
        <source>Rules only (no model, nothing spent)</source>
        <translation>Rules only (no model, nothing spent)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="49"/>
        <source>Claude Code (claude -p, your account)</source>
        <translation>Claude Code (claude -p, your account)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="50"/>
        <source>Codex (codex exec, your account)</source>
        <translation>Codex (codex exec, your account)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="51"/>
        <source>Gemini CLI (gemini -p, your account)</source>
        <translation>Gemini CLI (gemini -p, your account)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="52"/>
        <source>Automatic (best available)</source>
        <translation>Automatic (best available)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="53"/>
        <source>Bundled MiniLM (offline)</source>
        <translation>Bundled MiniLM (offline)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="54"/>
        <source>Ollama</source>
        <translation>Ollama</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="56"/>
        <source>Follow the system</source>
        <translation>Follow the system</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="59"/>
        <source>JSON (everything, re-importable)</source>
        <translation>JSON (everything, re-importable)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="60"/>
        <source>Markdown</source>
        <translation>Markdown</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="62"/>
        <source>DELETE</source>
        <translation>DELETE</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="81"/>
        <source>Settings</source>
        <translation>Settings</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="84"/>
        <source>&amp;Models</source>
        <translation>&amp;Models</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="85"/>
        <source>&amp;Data</source>
        <translation>&amp;Data</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="86"/>
        <location filename="../desktop/ui/dialogs/settings.py" line="278"/>
        <source>&amp;Language</source>
        <translation>&amp;Language</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="92"/>
        <source>&amp;Trust &amp;&amp; control</source>
        <translation>&amp;Trust &amp;&amp; control</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="94"/>
        <source>T&amp;eam</source>
        <translation>T&amp;eam</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="96"/>
        <source>Agent &amp;hooks</source>
        <translation>Agent &amp;hooks</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="119"/>
        <source>e.g. qwen3:8b, gpt-4.1-mini, claude-sonnet-4</source>
        <translation>e.g. qwen3:8b, gpt-4.1-mini, claude-sonnet-4</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="122"/>
        <source>empty = the provider&apos;s default</source>
        <translation>empty = the provider&apos;s default</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="129"/>
        <source>Paste an API key</source>
        <translation>Paste an API key</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="130"/>
        <source>Save in the system &amp;keyring</source>
        <translation>Save in the system &amp;keyring</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="132"/>
        <source>Keys are kept by the operating system, never in Engram&apos;s files</source>
        <translation>Keys are kept by the operating system, never in Engram&apos;s files</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="134"/>
        <source>Checking the system keyring…</source>
        <translation>Checking the system keyring…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="141"/>
        <source>&amp;Agent model provider</source>
        <translation>&amp;Agent model provider</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="142"/>
        <source>Agent &amp;model</source>
        <translation>Agent &amp;model</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="143"/>
        <source>&amp;Embeddings</source>
        <translation>&amp;Embeddings</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="144"/>
        <source>Embedding mo&amp;del</source>
        <translation>Embedding mo&amp;del</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="145"/>
        <source>Ollama &amp;address</source>
        <translation>Ollama &amp;address</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="146"/>
        <source>OpenAI-compatible &amp;URL</source>
        <translation>OpenAI-compatible &amp;URL</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="147"/>
        <source>API &amp;key</source>
        <translation>API &amp;key</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="157"/>
        <source>Memory &amp;learning model</source>
        <translation>Memory &amp;learning model</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="165"/>
        <source>Only the rules learn from your sessions: no request is sent, nothing is spent.</source>
        <translation>Only the rules learn from your sessions: no request is sent, nothing is spent.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="167"/>
        <source>Uses the agent model above when one is set (one request per finished session); with none, only the rules learn and nothing is spent.</source>
        <translation>Uses the agent model above when one is set (one request per finished session); with none, only the rules learn and nothing is spent.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="170"/>
        <source>After each finished session, one request of at most %1 tokens goes to %2 through your own account (subscription or API key), plus one every 10 sessions to merge what they found. Every memory it writes is checked against the session and waits for your review.</source>
        <translation>After each finished session, one request of at most %1 tokens goes to %2 through your own account (subscription or API key), plus one every 10 sessions to merge what they found. Every memory it writes is checked against the session and waits for your review.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="183"/>
        <source>Keys are stored in the system keyring.</source>
        <translation>Keys are stored in the system keyring.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="184"/>
        <source>No secure keyring was found on this system, so Engram will not store API keys. Set them in the environment instead (e.g. OPENAI_API_KEY).</source>
        <translation>No secure keyring was found on this system, so Engram will not store API keys. Set them in the environment instead (e.g. OPENAI_API_KEY).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="194"/>
        <source>Choose where Engram keeps its data</source>
        <translation>Choose where Engram keeps its data</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="201"/>
        <source>Data folder not changed</source>
        <translation>Data folder not changed</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="203"/>
        <source>Data folder changed</source>
        <translation>Data folder changed</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="204"/>
        <source>Engram will keep its data in %1 from its next start.</source>
        <translation>Engram will keep its data in %1 from its next start.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="210"/>
        <source>Memory is stored on this computer in:</source>
        <translation>Memory is stored on this computer in:</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="212"/>
        <source>&amp;Open the data folder</source>
        <translation>&amp;Open the data folder</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="214"/>
        <source>To keep the data elsewhere (a portable drive, a synced folder), choose another folder: Engram uses it from its next start. Projects already stored stay where they are; export and import them to move their memories.</source>
        <translation>To keep the data elsewhere (a portable drive, a synced folder), choose another folder: Engram uses it from its next start. Projects already stored stay where they are; export and import them to move their memories.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="218"/>
        <source>&amp;Change the data folder…</source>
        <translation>&amp;Change the data folder…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="222"/>
        <source>&amp;Export…</source>
        <translation>&amp;Export…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="225"/>
        <source>&amp;Import…</source>
        <translation>&amp;Import…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="227"/>
        <source>JSON, JSON Lines, Markdown, CLAUDE.md, AGENTS.md or .cursorrules</source>
        <translation>JSON, JSON Lines, Markdown, CLAUDE.md, AGENTS.md or .cursorrules</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="234"/>
        <source>Delete &amp;everything in this project…</source>
        <translation>Delete &amp;everything in this project…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="236"/>
        <source>Removes every memory for good and scrubs the database file</source>
        <translation>Removes every memory for good and scrubs the database file</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="241"/>
        <source>Export and import</source>
        <translation>Export and import</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="252"/>
        <source>Export memories</source>
        <translation>Export memories</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="257"/>
        <source>Import memories</source>
        <translation>Import memories</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="258"/>
        <source>Memory files (*.json *.jsonl *.md *.mdc *.cursorrules);;All files (*)</source>
        <translation>Memory files (*.json *.jsonl *.md *.mdc *.cursorrules);;All files (*)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="266"/>
        <source>Delete everything</source>
        <translation>Delete everything</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="267"/>
        <source>Every memory of this project will be deleted for good. Type %1 to confirm.</source>
        <translation>Every memory of this project will be deleted for good. Type %1 to confirm.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/settings.py" line="276"/>
        <source>Menus and panels switch at once; a few texts follow after a restart.</source>
        <translation>Menus and panels switch at once; a few texts follow after a restart.</translation>
    </message>
</context>
<context>
    <name>TeamPanel</name>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="48"/>
        <source>Reading the team settings…</source>
        <translation>Reading the team settings…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="54"/>
        <source>postgresql://team-role:password@host/database?sslmode=verify-full</source>
        <translation>postgresql://team-role:password@host/database?sslmode=verify-full</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="57"/>
        <source>How teammates see you</source>
        <translation>How teammates see you</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="58"/>
        <source>&amp;Test</source>
        <translation>&amp;Test</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="61"/>
        <source>&amp;Connect</source>
        <translation>&amp;Connect</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="65"/>
        <source>&amp;Leave the team</source>
        <translation>&amp;Leave the team</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="67"/>
        <source>Stops syncing; the memories on this computer are kept</source>
        <translation>Stops syncing; the memories on this computer are kept</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="77"/>
        <source>Server &amp;URL</source>
        <translation>Server &amp;URL</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="78"/>
        <source>Your &amp;name</source>
        <translation>Your &amp;name</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="79"/>
        <source>Shared with the team</source>
        <translation>Shared with the team</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="89"/>
        <source>Personal memories never leave this computer. Secrets are redacted before anything is sent. One memory can be shared or kept personal with the Team button of the memory browser.</source>
        <translation>Personal memories never leave this computer. Secrets are redacted before anything is sent. One memory can be shared or kept personal with the Team button of the memory browser.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="107"/>
        <source>Connected to team %1 on %2 as %3.</source>
        <translation>Connected to team %1 on %2 as %3.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/team.py" line="110"/>
        <source>Not connected to a team. Paste the join URL your team admin gave you.</source>
        <translation>Not connected to a team. Paste the join URL your team admin gave you.</translation>
    </message>
</context>
<context>
    <name>Trust</name>
    <message>
        <location filename="../desktop/ui/trust.py" line="31"/>
        <source>Cautious</source>
        <translation>Cautious</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="31"/>
        <source>Only memories above 0.80 confidence reach the agent. Every new memory waits for your confirmation at the end of the session.</source>
        <translation>Only memories above 0.80 confidence reach the agent. Every new memory waits for your confirmation at the end of the session.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="34"/>
        <source>Standard</source>
        <translation>Standard</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="34"/>
        <source>Memories above 0.65 reach the agent, and gotchas are offered while it works. The session summary proposes “Confirm all”.</source>
        <translation>Memories above 0.65 reach the agent, and gotchas are offered while it works. The session summary proposes “Confirm all”.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="37"/>
        <source>Confident</source>
        <translation>Confident</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="37"/>
        <source>Memories above 0.55 reach the agent. The session summary only shows memories that need review.</source>
        <translation>Memories above 0.55 reach the agent. The session summary only shows memories that need review.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="40"/>
        <source>Autonomous</source>
        <translation>Autonomous</translation>
    </message>
    <message>
        <location filename="../desktop/ui/trust.py" line="40"/>
        <source>Memories above 0.45 reach the agent. The session summary is not shown unless you open it from the memory panel.</source>
        <translation>Memories above 0.45 reach the agent. The session summary is not shown unless you open it from the memory panel.</translation>
    </message>
</context>
<context>
    <name>TrustPanel</name>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="30"/>
        <source>Off — agents neither read nor write memory</source>
        <translation>Off — agents neither read nor write memory</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="31"/>
        <source>Read-only — agents use memory but never add to it</source>
        <translation>Read-only — agents use memory but never add to it</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="32"/>
        <source>Confirm each — new memories wait for your OK</source>
        <translation>Confirm each — new memories wait for your OK</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="33"/>
        <source>Automatic — saved at once, quarantined until reviewed</source>
        <translation>Automatic — saved at once, quarantined until reviewed</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="36"/>
        <source>Conservative — promote only strong, repeated signals</source>
        <translation>Conservative — promote only strong, repeated signals</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="37"/>
        <source>Balanced — the default thresholds</source>
        <translation>Balanced — the default thresholds</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="38"/>
        <source>Eager — promote more, review more</source>
        <translation>Eager — promote more, review more</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="50"/>
        <source>Trust level</source>
        <translation>Trust level</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="73"/>
        <source>Let Engram learn from sessions automatically (auto-memory)</source>
        <translation>Let Engram learn from sessions automatically (auto-memory)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="75"/>
        <source>When off, only what you teach is remembered</source>
        <translation>When off, only what you teach is remembered</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="81"/>
        <source>&amp;Write policy</source>
        <translation>&amp;Write policy</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="83"/>
        <source>&amp;Promotion</source>
        <translation>&amp;Promotion</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="112"/>
        <source>To reach Standard: 3 sessions (%1 so far) and half of the new memories confirmed (%2% so far).</source>
        <translation>To reach Standard: 3 sessions (%1 so far) and half of the new memories confirmed (%2% so far).</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="116"/>
        <source>To reach Confident: 10 sessions (%1 so far), under 5% corrected (%2%) and at least one correction made.</source>
        <translation>To reach Confident: 10 sessions (%1 so far), under 5% corrected (%2%) and at least one correction made.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="120"/>
        <source>Higher levels are only ever chosen by you.</source>
        <translation>Higher levels are only ever chosen by you.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="122"/>
        <source>This project has earned the next level. Choose it above when you are ready.</source>
        <translation>This project has earned the next level. Choose it above when you are ready.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="128"/>
        <source>Raise the trust level?</source>
        <translation>Raise the trust level?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="129"/>
        <source>At %1, agents receive memories down to %2 confidence and you see less of the session summary. You can go back at any time. Continue?</source>
        <translation>At %1, agents receive memories down to %2 confidence and you see less of the session summary. You can go back at any time. Continue?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="150"/>
        <source>Step back to a more careful level?</source>
        <translation>Step back to a more careful level?</translation>
    </message>
    <message>
        <location filename="../desktop/ui/dialogs/trust.py" line="151"/>
        <source>You flagged %1 memories as wrong in this session. Move this project from %2 to %3, so agents get only surer memories? Nothing changes unless you agree.</source>
        <translation>You flagged %1 memories as wrong in this session. Move this project from %2 to %3, so agents get only surer memories? Nothing changes unless you agree.</translation>
    </message>
</context>
<context>
    <name>WelcomePage</name>
    <message>
        <location filename="../desktop/ui/welcome.py" line="25"/>
        <source>Long-term memory of your codebase for AI coding agents.
Open a project folder to start.</source>
        <translation>Long-term memory of your codebase for AI coding agents.
Open a project folder to start.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/welcome.py" line="28"/>
        <source>&amp;Open a project folder…</source>
        <translation>&amp;Open a project folder…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/welcome.py" line="33"/>
        <source>Double-click to open; right-click or Delete to remove from this list</source>
        <translation>Double-click to open; right-click or Delete to remove from this list</translation>
    </message>
    <message>
        <location filename="../desktop/ui/welcome.py" line="37"/>
        <source>&amp;Remove from Recent Projects</source>
        <translation>&amp;Remove from Recent Projects</translation>
    </message>
    <message>
        <location filename="../desktop/ui/welcome.py" line="48"/>
        <source>Recent projects</source>
        <translation>Recent projects</translation>
    </message>
</context>
<context>
    <name>WindowMenus</name>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="47"/>
        <source>&amp;File</source>
        <translation>&amp;File</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="48"/>
        <source>&amp;Open Project…</source>
        <translation>&amp;Open Project…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="50"/>
        <source>Open &amp;Recent</source>
        <translation>Open &amp;Recent</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="52"/>
        <source>&amp;Settings…</source>
        <translation>&amp;Settings…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="55"/>
        <source>&amp;Quit</source>
        <translation>&amp;Quit</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="56"/>
        <source>&amp;Project</source>
        <translation>&amp;Project</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="57"/>
        <source>&amp;Teach Engram…</source>
        <translation>&amp;Teach Engram…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="58"/>
        <source>Write down something agents should know</source>
        <translation>Write down something agents should know</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="59"/>
        <source>&amp;Review Memories…</source>
        <translation>&amp;Review Memories…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="61"/>
        <source>Confirm or forget memories that wait for review</source>
        <translation>Confirm or forget memories that wait for review</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="62"/>
        <source>Resolve &amp;Conflicts…</source>
        <translation>Resolve &amp;Conflicts…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="63"/>
        <source>Decide between memories that disagree</source>
        <translation>Decide between memories that disagree</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="64"/>
        <source>&amp;Get to Know This Project…</source>
        <translation>&amp;Get to Know This Project…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="66"/>
        <source>Index the code and import agent rule files</source>
        <translation>Index the code and import agent rule files</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="69"/>
        <source>&amp;View</source>
        <translation>&amp;View</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="70"/>
        <source>&amp;Memory Panel</source>
        <translation>&amp;Memory Panel</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="72"/>
        <source>Show or hide the memory panel (%1)</source>
        <translation>Show or hide the memory panel (%1)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="79"/>
        <source>Last Session &amp;Summary…</source>
        <translation>Last Session &amp;Summary…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="80"/>
        <source>&amp;Help</source>
        <translation>&amp;Help</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="81"/>
        <source>Guided &amp;Tour (Sample Project)</source>
        <translation>Guided &amp;Tour (Sample Project)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="82"/>
        <source>Open a sample project Engram creates, with a scripted agent; your projects are not touched</source>
        <translation>Open a sample project Engram creates, with a scripted agent; your projects are not touched</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="85"/>
        <source>&amp;About Engram</source>
        <translation>&amp;About Engram</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="86"/>
        <source>Engram %1
Long-term memory for AI coding agents.</source>
        <translation>Engram %1
Long-term memory for AI coding agents.</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="92"/>
        <source>Switch project</source>
        <translation>Switch project</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="97"/>
        <source>Settings</source>
        <translation>Settings</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="98"/>
        <source>Models, keys, data, language, trust</source>
        <translation>Models, keys, data, language, trust</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="117"/>
        <source>Guided tour (sample project)</source>
        <translation>Guided tour (sample project)</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="127"/>
        <source>No project open</source>
        <translation>No project open</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="129"/>
        <source>Open another folder…</source>
        <translation>Open another folder…</translation>
    </message>
    <message>
        <location filename="../desktop/ui/window_menus.py" line="146"/>
        <source>Memory</source>
        <translation>Memory</translation>
    </message>
</context>
</TS>
