package classify

import "testing"

func TestFamily(t *testing.T) {
	f := func(tool, want string) {
		t.Helper()
		if got := Family(tool); got != want {
			t.Fatalf("Family(%q) = %s, want %s", tool, got, want)
		}
	}
	f("Read", FamilyReadFile)
	f("Write", FamilyModifyFile)
	f("Edit", FamilyModifyFile)
	f("MultiEdit", FamilyModifyFile)
	f("NotebookEdit", FamilyModifyFile)
	f("apply_patch", FamilyModifyFile)
	f("Bash", FamilyRunCommand)
	f("PowerShell", FamilyRunCommand)
	f("exec_command", FamilyRunCommand)
	f("Glob", FamilySearch)
	f("Grep", FamilySearch)
	f("WebFetch", FamilyWebFetch)
	f("WebSearch", FamilyWebFetch)
	f("Agent", FamilyDelegation)
	f("Task", FamilyDelegation)
	f("spawn_agent", FamilyDelegation)
	f("multi_agent_v1wait_agent", FamilyDelegation)
	f("mcp__context7__resolve-library-id", FamilyMCPCall)
	f("mcp__", FamilyMCPCall)
	f("TaskCreate", FamilyTask)
	f("TaskUpdate", FamilyTask)
	f("TodoWrite", FamilyTask)
	f("ExitPlanMode", FamilyOther)
	f("AskUserQuestion", FamilyOther)
	f("", FamilyOther)
	f("read", FamilyOther) // names are case-sensitive, as in matchers
}
